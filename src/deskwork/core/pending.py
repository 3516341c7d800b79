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
    answer_schema: dict[str, Any] | None = None
    """The JSON schema a ``user_input`` answer must fit (the tool's input-key parameter, or
    its ``output_type`` when the answer is the call's result); ``None`` takes any answer
    (other pauses, and a pause stored before this field existed)."""
