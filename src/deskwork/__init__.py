"""deskwork: a code-first framework for multi-agent LLM systems.

One durable runtime (the :class:`Desk`) runs every kind of runner — a single
:class:`Worker`, a :class:`Workforce`, a workflow, a blackboard architecture — with one
event model, one store, and pause/resume that survives a restart.

Importing deskwork does not import LiteLLM, LangGraph, Chroma or MCP; they load when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.core.event import Event, EventType
from deskwork.core.job import Brief, Job
from deskwork.core.message import Message
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
    StoreError,
    StreamingUnsupportedError,
    ToolExecutionError,
    ToolTimeoutError,
    ToolValidationError,
)
from deskwork.runtime.config import RunConfig
from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.utils import encode_file, new_id, utc_now

if TYPE_CHECKING:
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
    from deskwork.runtime.session import WorkerSession
    from deskwork.tools.images import generate_image
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
    "Report",
    "RunConfig",
    "RunFailedPayload",
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
    "WorkerSession": "deskwork.runtime.session",
    "AssistantMessagePayload": "deskwork.core.payloads",
    "LLMCompletedPayload": "deskwork.core.payloads",
    "LLMFailedPayload": "deskwork.core.payloads",
    "LLMStartedPayload": "deskwork.core.payloads",
    "RunFailedPayload": "deskwork.core.payloads",
    "RunStartedPayload": "deskwork.core.payloads",
    "StepCompletedPayload": "deskwork.core.payloads",
    "StepPausedPayload": "deskwork.core.payloads",
    "StreamTokenPayload": "deskwork.core.payloads",
    "ToolCompletedPayload": "deskwork.core.payloads",
    "ToolFailedPayload": "deskwork.core.payloads",
    "ToolStartedPayload": "deskwork.core.payloads",
    "WorkerContextSummarizedPayload": "deskwork.core.payloads",
    "WorkerFailedPayload": "deskwork.core.payloads",
    "WorkerPausedPayload": "deskwork.core.payloads",
    "WorkforcePausedPayload": "deskwork.core.payloads",
    "Workforce": "deskwork.workforce",
    "generate_image": "deskwork.tools.images",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deskwork' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
