"""Tools that let workers use a ``Channel`` or a ``Blackboard`` through tool calls.

Each factory binds the primitive and the worker's identity, so the model only supplies the
message or the key::

    analyst = Worker(
        name="analyst",
        tools=[blackboard_write_tool(board, "analyst"), channel_send_tool(channel, "analyst")],
    )

| tool | arguments | returns |
|---|---|---|
| ``channel_send`` | ``recipient``, ``content``, ``metadata`` (optional) | the message id |
| ``channel_broadcast`` | ``content``, ``metadata`` (optional) | the message id |
| ``channel_receive`` | ``broadcast_mode`` (one_shot or all), ``clear`` | message dicts |
| ``blackboard_write`` | ``key``, ``value`` | the key written |
| ``blackboard_read`` | ``key`` | the stored value, or ``None`` |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from deskwork.collaboration._blackboard import Blackboard
from deskwork.collaboration._channel import BroadcastMode, Channel
from deskwork.tools.base import Tool, tool

__all__ = [
    "blackboard_read_tool",
    "blackboard_write_tool",
    "channel_broadcast_tool",
    "channel_receive_tool",
    "channel_send_tool",
]


def _make(fn: Callable[..., Any], output_type: Any = None) -> Tool:
    """Build the tool for ``fn`` (its name, description and schema come from the function)."""
    return tool(output_type=output_type)(fn)


def channel_send_tool(channel: Channel, sender: str) -> Tool:
    """A ``channel_send`` tool: direct messages from ``sender``.

    Args:
        channel: The channel to send through.
        sender: The sending worker's name (recorded on every message).
    """

    def channel_send(
        recipient: str, content: JsonValue, metadata: dict[str, Any] | None = None
    ) -> str:
        """Send a direct message to another worker; returns the message id."""
        return channel.send(sender, recipient, content, metadata).id

    return _make(channel_send)


def channel_broadcast_tool(channel: Channel, sender: str) -> Tool:
    """A ``channel_broadcast`` tool: messages from ``sender`` to every other worker.

    Args:
        channel: The channel to broadcast on.
        sender: The broadcasting worker's name.
    """

    def channel_broadcast(content: JsonValue, metadata: dict[str, Any] | None = None) -> str:
        """Send a message to every other worker; returns the message id."""
        return channel.broadcast(sender, content, metadata).id

    return _make(channel_broadcast)


def channel_receive_tool(channel: Channel, recipient: str) -> Tool:
    """A ``channel_receive`` tool: the messages waiting for ``recipient``.

    Args:
        channel: The channel to read from.
        recipient: The receiving worker's name.
    """

    def channel_receive(
        broadcast_mode: BroadcastMode = "one_shot", clear: bool = True
    ) -> list[dict[str, Any]]:
        """Read your direct messages and broadcasts, oldest first.

        ``broadcast_mode="one_shot"`` returns each broadcast once, ``"all"`` the whole log;
        ``clear=False`` leaves the messages unread.
        """
        messages = channel.receive(recipient, clear=clear, broadcast_mode=broadcast_mode)
        return [message.to_dict() for message in messages]

    return _make(channel_receive, output_type=list[dict[str, Any]])


def blackboard_write_tool(board: Blackboard, author: str) -> Tool:
    """A ``blackboard_write`` tool: store values on ``board`` as ``author``.

    Args:
        board: The shared board.
        author: The writing worker's name (recorded on the entry).
    """

    def blackboard_write(key: str, value: JsonValue) -> str:
        """Store a JSON value under a key on the shared blackboard; returns the key."""
        board.write(key, value, author)
        return key

    return _make(blackboard_write)


def blackboard_read_tool(board: Blackboard) -> Tool:
    """A ``blackboard_read`` tool: read values from ``board``.

    Args:
        board: The shared board.
    """

    def blackboard_read(key: str) -> JsonValue:
        """Read the value stored under a key on the shared blackboard (null when missing)."""
        value: JsonValue = board.read(key)
        return value

    return _make(blackboard_read, output_type=JsonValue)
