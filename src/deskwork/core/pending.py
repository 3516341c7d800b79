"""The action a paused run waits for."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from deskwork.core.tool_call import ToolCall
from deskwork.core.types import PendingActionType

__all__ = ["PendingAction"]


class PendingAction(BaseModel):
    """Returned in ``Report.pending_action`` when a run pauses."""

    action_id: str
    type: PendingActionType
    tool_call: ToolCall
    prompt: str
    options: list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
