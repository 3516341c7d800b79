"""Typed payloads for built-in events (documentation and type hints).

Handlers receive ``Event.payload`` as a plain dict whose keys match these dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AssistantMessagePayload",
    "LLMCompletedPayload",
    "LLMFailedPayload",
    "LLMStartedPayload",
    "RunFailedPayload",
    "RunStartedPayload",
    "StepCompletedPayload",
    "StepPausedPayload",
    "StreamTokenPayload",
    "ToolCompletedPayload",
    "ToolFailedPayload",
    "ToolStartedPayload",
    "WorkerContextSummarizedPayload",
    "WorkerFailedPayload",
    "WorkerPausedPayload",
    "WorkforcePausedPayload",
]


@dataclass(slots=True)
class RunStartedPayload:
    job_id: str


@dataclass(slots=True)
class RunFailedPayload:
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class WorkerPausedPayload:
    pending_action_type: Literal["confirmation", "user_input", "handoff"]


@dataclass(slots=True)
class WorkerFailedPayload:
    error: str


@dataclass(slots=True)
class WorkerContextSummarizedPayload:
    model: str
    summarized_messages: int
    kept_messages: int
    unregistered_model: bool = False
    registration_hint: str | None = None


@dataclass(slots=True)
class ToolStartedPayload:
    tool_call_id: str


@dataclass(slots=True)
class ToolCompletedPayload:
    tool_call_id: str
    result_preview: str | None = None
    result_truncated: bool = False
    timed_out: bool = False
    cancelled: bool = False


@dataclass(slots=True)
class ToolFailedPayload:
    tool_call_id: str
    error: str


@dataclass(slots=True)
class StreamTokenPayload:
    token: str
    type: Literal["content", "tool_argument"] = "content"


@dataclass(slots=True)
class AssistantMessagePayload:
    content: Any
    tool_calls: list[dict[str, Any]] | None = None


@dataclass(slots=True)
class LLMStartedPayload:
    model: str
    messages_count: int
    tools_count: int


@dataclass(slots=True)
class LLMCompletedPayload:
    model: str
    latency_ms: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None
    finish_reason: str | None = None
    """Present when the reply ended otherwise than ``stop`` or ``tool_calls``: ``length``
    (cut at ``max_tokens``), ``content_filter``."""


@dataclass(slots=True)
class LLMFailedPayload:
    model: str
    latency_ms: float
    error_type: str
    error_message: str
    reply: str | None = None
    """A structured output that failed validation: the model's last reply (redacted, bounded)."""


@dataclass(slots=True)
class StepCompletedPayload:
    status: str


@dataclass(slots=True)
class StepPausedPayload:
    status: str


@dataclass(slots=True)
class WorkforcePausedPayload:
    root_job: dict[str, Any]
    completed_reports: list[dict[str, Any]] = field(default_factory=list)
    pending_worker_index: int = 0
