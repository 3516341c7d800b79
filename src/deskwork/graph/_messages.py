"""LangChain messages <-> deskwork messages: the one conversion the graph layer uses.

``GraphRunner`` reports a graph's conversation as deskwork ``Message`` objects, and
``DeskworkChatModel`` sends LangChain messages to a deskwork model adapter in the OpenAI chat
format; both go through these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from deskwork.core.message import Message
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import MessageRole

__all__ = ["from_message", "text_of", "to_message", "to_provider"]

_ROLES: dict[str, MessageRole] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "developer": "system",
}


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or the text parts of a content list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part if isinstance(part, str) else str(part.get("text", ""))
            for part in content
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type") == "text")
        ]
        return "".join(parts)
    return "" if content is None else str(content)


def to_message(message: BaseMessage) -> Message:
    """A LangChain message as a deskwork ``Message``."""
    role = _ROLES.get(message.type, "user")
    content: str | list[dict[str, Any]] | None
    content = message.content if isinstance(message.content, str) else list(message.content)  # type: ignore[arg-type]
    calls = None
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [
            ToolCall(id=call.get("id") or f"call_{i}", name=call["name"], arguments=call["args"])
            for i, call in enumerate(message.tool_calls)
        ]
    return Message(
        role=role,
        content=content,
        tool_calls=calls,
        tool_call_id=message.tool_call_id if isinstance(message, ToolMessage) else None,
        name=message.name,
    )


def to_provider(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages in the OpenAI chat format that deskwork adapters take."""
    return [to_message(message).to_provider() for message in messages]


def from_message(message: Message) -> BaseMessage:
    """A deskwork ``Message`` as a LangChain message."""
    content: Any = message.content if message.content is not None else ""
    if message.role == "assistant":
        calls = [
            {"id": call.id, "name": call.name, "args": call.arguments, "type": "tool_call"}
            for call in message.tool_calls or ()
        ]
        return AIMessage(content=content, tool_calls=calls)
    if message.role == "tool":
        return ToolMessage(content=content, tool_call_id=message.tool_call_id or "")
    if message.role == "system":
        return SystemMessage(content=content)
    return HumanMessage(content=content)
