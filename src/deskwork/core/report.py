"""Report: the result of any run."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from deskwork.core._model import DeskworkModel
from deskwork.core.event import Event
from deskwork.core.message import Message
from deskwork.core.pending import PendingAction
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import RunStatus

__all__ = ["Report", "RunOutput"]


class Report(DeskworkModel):
    """What a run produced. ``status`` is completed, paused, failed (or running)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    status: RunStatus
    pending_action: PendingAction | None = None
    content: str | None = None
    reasoning_content: str | None = None
    data: Any = None
    """Structured output when the job set ``response_schema``."""
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


RunOutput = Report
