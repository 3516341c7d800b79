"""Collaboration primitives: a shared ``Blackboard`` and a message ``Channel`` for workers.

Both are thread-safe, have ``a*`` async twins of every method, and save to JSON with
``to_state()`` / ``from_state()`` so they survive a process restart inside a run's stored state.
"""

from __future__ import annotations

from deskwork.collaboration._blackboard import Blackboard, BlackboardCallback, BlackboardEntry
from deskwork.collaboration._channel import BroadcastMode, Channel, ChannelMessage
from deskwork.collaboration.tools import (
    blackboard_read_tool,
    blackboard_write_tool,
    channel_broadcast_tool,
    channel_receive_tool,
    channel_send_tool,
)

__all__ = [
    "Blackboard",
    "BlackboardCallback",
    "BlackboardEntry",
    "BroadcastMode",
    "Channel",
    "ChannelMessage",
    "blackboard_read_tool",
    "blackboard_write_tool",
    "channel_broadcast_tool",
    "channel_receive_tool",
    "channel_send_tool",
]
