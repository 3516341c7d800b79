"""The action a paused run waits for."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from deskwork.core._model import DeskworkModel
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import PendingActionType

__all__ = ["PendingAction"]


class PendingAction(DeskworkModel):
    """Returned in ``Report.pending_action`` when a run pauses."""

    action_id: str
    type: PendingActionType
    tool_call: ToolCall
    prompt: str
    options: list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
