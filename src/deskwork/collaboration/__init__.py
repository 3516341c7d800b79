"""Collaboration primitives: a shared ``Blackboard`` and a message ``Channel`` for workers.

Both are thread-safe, have ``a*`` async twins of every method, and save to JSON with
``to_state()`` / ``from_state()`` so they survive a process restart inside a run's stored state.
"""

from __future__ import annotations

from deskwork.collaboration._blackboard import Blackboard, BlackboardCallback, BlackboardEntry
from deskwork.collaboration._channel import BroadcastMode, Channel, ChannelMessage

# Collaboration tools (channel_send_tool, channel_receive_tool, channel_broadcast_tool,
# blackboard_read_tool, blackboard_write_tool) live in ``deskwork.collaboration.tools`` and are
# re-exported here (import them above and add their names to ``__all__``, kept sorted).

__all__ = [
    "Blackboard",
    "BlackboardCallback",
    "BlackboardEntry",
    "BroadcastMode",
    "Channel",
    "ChannelMessage",
]
