"""deskwork: a code-first framework for multi-agent LLM systems.

One durable runtime (the :class:`Desk`) runs every kind of runner — a single
:class:`Worker`, a :class:`Workforce`, a workflow, a blackboard architecture — with one
event model, one store, and pause/resume that survives a restart.

Importing deskwork does not import LiteLLM, LangGraph, Chroma or MCP; they load when used.
"""

from __future__ import annotations

from deskwork._lazy import lazy_exports as _lazy_exports

# typing.TYPE_CHECKING without importing typing (and the re, enum and collections it loads):
# type checkers read the name as true, so `import deskwork` stays this one file and _lazy.py
TYPE_CHECKING = False
if TYPE_CHECKING:
    from deskwork.core.event import Event, EventType
    from deskwork.core.job import Brief, Job
    from deskwork.core.message import Message
    from deskwork.core.payloads import (
        AssistantMessagePayload,
        LLMCompletedPayload,
        LLMFailedPayload,
        LLMStartedPayload,
        RunFailedPayload,
        RunStartedPayload,
        StepCompletedPayload,
        StepPausedPayload,
        StreamTokenPayload,
        ToolCompletedPayload,
        ToolFailedPayload,
        ToolStartedPayload,
        WorkerContextSummarizedPayload,
        WorkerFailedPayload,
        WorkerPausedPayload,
        WorkforcePausedPayload,
    )
    from deskwork.core.pending import PendingAction
    from deskwork.core.report import Report, RunOutput
    from deskwork.core.state import RunRecord, RunState
    from deskwork.core.tool_call import ToolCall, ToolResult
    from deskwork.core.types import MessageRole, PendingActionType, RunStatus, WorkforceMode
    from deskwork.event_bus import EventBus
    from deskwork.exceptions import (
        ConfigurationError,
        ContextLimitError,
        DeskworkError,
        EventHandlerError,
        EventLoopRunningError,
        MissingExtraError,
        RunnerNotRegisteredError,
        RunNotRunningError,
        StoreError,
        StreamingUnsupportedError,
        ToolExecutionError,
        ToolTimeoutError,
        ToolValidationError,
    )
    from deskwork.runtime._queues import QueueSettings
    from deskwork.runtime.config import RunConfig
    from deskwork.runtime.desk import Desk
    from deskwork.runtime.session import WorkerSession
    from deskwork.runtime.worker import Worker
    from deskwork.tools.images import generate_image
    from deskwork.utils import encode_file, new_id, utc_now
    from deskwork.workforce import Workforce

__version__ = "0.1.0"

__all__ = [
    "AssistantMessagePayload",
    "Brief",
    "ConfigurationError",
    "ContextLimitError",
    "Desk",
    "DeskworkError",
    "Event",
    "EventBus",
    "EventHandlerError",
    "EventLoopRunningError",
    "EventType",
    "Job",
    "LLMCompletedPayload",
    "LLMFailedPayload",
    "LLMStartedPayload",
    "Message",
    "MessageRole",
    "MissingExtraError",
    "PendingAction",
    "PendingActionType",
    "QueueSettings",
    "Report",
    "RunConfig",
    "RunFailedPayload",
    "RunNotRunningError",
    "RunOutput",
    "RunRecord",
    "RunStartedPayload",
    "RunState",
    "RunStatus",
    "RunnerNotRegisteredError",
    "StepCompletedPayload",
    "StepPausedPayload",
    "StoreError",
    "StreamTokenPayload",
    "StreamingUnsupportedError",
    "ToolCall",
    "ToolCompletedPayload",
    "ToolExecutionError",
    "ToolFailedPayload",
    "ToolResult",
    "ToolStartedPayload",
    "ToolTimeoutError",
    "ToolValidationError",
    "Worker",
    "WorkerContextSummarizedPayload",
    "WorkerFailedPayload",
    "WorkerPausedPayload",
    "WorkerSession",
    "Workforce",
    "WorkforceMode",
    "WorkforcePausedPayload",
    "encode_file",
    "generate_image",
    "new_id",
    "utc_now",
]

_LAZY = {
    "AssistantMessagePayload": "deskwork.core.payloads",
    "Brief": "deskwork.core.job",
    "ConfigurationError": "deskwork.exceptions",
    "ContextLimitError": "deskwork.exceptions",
    "Desk": "deskwork.runtime.desk",
    "DeskworkError": "deskwork.exceptions",
    "Event": "deskwork.core.event",
    "EventBus": "deskwork.event_bus",
    "EventHandlerError": "deskwork.exceptions",
    "EventLoopRunningError": "deskwork.exceptions",
    "EventType": "deskwork.core.event",
    "Job": "deskwork.core.job",
    "LLMCompletedPayload": "deskwork.core.payloads",
    "LLMFailedPayload": "deskwork.core.payloads",
    "LLMStartedPayload": "deskwork.core.payloads",
    "Message": "deskwork.core.message",
    "MessageRole": "deskwork.core.types",
    "MissingExtraError": "deskwork.exceptions",
    "PendingAction": "deskwork.core.pending",
    "PendingActionType": "deskwork.core.types",
    "QueueSettings": "deskwork.runtime._queues",
    "Report": "deskwork.core.report",
    "RunConfig": "deskwork.runtime.config",
    "RunFailedPayload": "deskwork.core.payloads",
    "RunNotRunningError": "deskwork.exceptions",
    "RunOutput": "deskwork.core.report",
    "RunRecord": "deskwork.core.state",
    "RunStartedPayload": "deskwork.core.payloads",
    "RunState": "deskwork.core.state",
    "RunStatus": "deskwork.core.types",
    "RunnerNotRegisteredError": "deskwork.exceptions",
    "StepCompletedPayload": "deskwork.core.payloads",
    "StepPausedPayload": "deskwork.core.payloads",
    "StoreError": "deskwork.exceptions",
    "StreamTokenPayload": "deskwork.core.payloads",
    "StreamingUnsupportedError": "deskwork.exceptions",
    "ToolCall": "deskwork.core.tool_call",
    "ToolCompletedPayload": "deskwork.core.payloads",
    "ToolExecutionError": "deskwork.exceptions",
    "ToolFailedPayload": "deskwork.core.payloads",
    "ToolResult": "deskwork.core.tool_call",
    "ToolStartedPayload": "deskwork.core.payloads",
    "ToolTimeoutError": "deskwork.exceptions",
    "ToolValidationError": "deskwork.exceptions",
    "Worker": "deskwork.runtime.worker",
    "WorkerContextSummarizedPayload": "deskwork.core.payloads",
    "WorkerFailedPayload": "deskwork.core.payloads",
    "WorkerPausedPayload": "deskwork.core.payloads",
    "WorkerSession": "deskwork.runtime.session",
    "Workforce": "deskwork.workforce",
    "WorkforceMode": "deskwork.core.types",
    "WorkforcePausedPayload": "deskwork.core.payloads",
    "encode_file": "deskwork.utils",
    "generate_image": "deskwork.tools.images",
    "new_id": "deskwork.utils",
    "utc_now": "deskwork.utils",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
