"""Plain data types: jobs, reports, messages, tool calls, pending actions, events, run state."""

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
