"""Plain data types: jobs, reports, messages, tool calls, pending actions, events, run state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.core.event import Event, EventType
    from deskwork.core.job import Brief, Job
    from deskwork.core.message import Message
    from deskwork.core.pending import PendingAction
    from deskwork.core.report import Report, RunOutput
    from deskwork.core.state import RunRecord, RunState
    from deskwork.core.tool_call import ToolCall, ToolResult
    from deskwork.core.types import MessageRole, PendingActionType, RunStatus, WorkforceMode

__all__ = [
    "Brief",
    "Event",
    "EventType",
    "Job",
    "Message",
    "MessageRole",
    "PendingAction",
    "PendingActionType",
    "Report",
    "RunOutput",
    "RunRecord",
    "RunState",
    "RunStatus",
    "ToolCall",
    "ToolResult",
    "WorkforceMode",
]

_LAZY = {
    "Brief": "deskwork.core.job",
    "Event": "deskwork.core.event",
    "EventType": "deskwork.core.event",
    "Job": "deskwork.core.job",
    "Message": "deskwork.core.message",
    "MessageRole": "deskwork.core.types",
    "PendingAction": "deskwork.core.pending",
    "PendingActionType": "deskwork.core.types",
    "Report": "deskwork.core.report",
    "RunOutput": "deskwork.core.report",
    "RunRecord": "deskwork.core.state",
    "RunState": "deskwork.core.state",
    "RunStatus": "deskwork.core.types",
    "ToolCall": "deskwork.core.tool_call",
    "ToolResult": "deskwork.core.tool_call",
    "WorkforceMode": "deskwork.core.types",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
