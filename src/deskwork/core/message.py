"""Chat messages exchanged with the model."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from deskwork.core._model import DeskworkModel
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import MessageRole

__all__ = ["Message"]


class Message(DeskworkModel):
    """One chat message. ``content`` is a string or an OpenAI-style list of content parts."""

    role: MessageRole
    content: str | list[dict[str, Any]] | None = None
    reasoning_content: str | None = None
    """Separate reasoning output from thinking models."""
    thinking_blocks: list[dict[str, Any]] | None = None
    """Structured reasoning blocks (for example Anthropic thinking blocks)."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls emitted by the assistant."""
    tool_call_id: str | None = None
    """Set on tool results: the id of the call this message answers."""
    name: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_provider(self) -> dict[str, Any]:
        """Render the message in the OpenAI chat format that LiteLLM and most providers accept."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_provider() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        if self.reasoning_content is not None:
            out["reasoning_content"] = self.reasoning_content
        if self.thinking_blocks is not None:
            out["thinking_blocks"] = self.thinking_blocks
        return out
