"""A thread-safe message channel between workers: direct messages and broadcasts.

Storage::

    direct      recipient ─► [message, ...]   removed when received with clear=True
    broadcasts  [message, ...]                 a log, kept until clear()
    cursors     recipient ─► sequence number   broadcasts below it were seen (one_shot mode)

Every message gets an increasing sequence number when sent, so ``receive`` returns direct
messages and broadcasts interleaved in send order, and "seen" is one number per recipient
instead of a growing set of ids. Content and metadata are stored as private JSON copies (the
same rules as the ``Blackboard``) and every read hands out copies, so the channel can be saved
with ``to_state()`` and restored after a restart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, TypeAlias, get_args

from deskwork.collaboration._blackboard import check_name, copy_json, to_json_value
from deskwork.utils import new_id, utc_now

__all__ = ["BroadcastMode", "Channel", "ChannelMessage"]

BroadcastMode = Literal["one_shot", "all"]
"""How ``Channel.receive`` treats broadcasts: each once per recipient, or the whole log."""

_STATE_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class ChannelMessage:
    """One message sent through a ``Channel``."""

    id: str
    """Unique message id."""
    sender: str
    """Name of the sending worker."""
    recipient: str | None
    """Name of the receiving worker; ``None`` for broadcasts."""
    content: Any
    """The JSON message content."""
    timestamp: datetime
    """When the message was sent (UTC)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Additional JSON data about the message."""

    @property
    def is_broadcast(self) -> bool:
        """Whether the message was broadcast to every worker."""
        return self.recipient is None

    def to_dict(self) -> dict[str, Any]:
        """Return the message as a JSON-compatible dict (``timestamp`` in ISO 8601)."""
        return {
            "id": self.id,
            "sender": self.sender,
            "recipient": self.recipient,
            "content": copy_json(self.content),
            "timestamp": self.timestamp.isoformat(),
            "metadata": copy_json(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChannelMessage:
        """Build a message from the output of ``to_dict``.

        Raises:
            ValueError: a field is missing or malformed.
        """
        try:
            return cls(
                id=str(data["id"]),
                sender=str(data["sender"]),
                recipient=None if data["recipient"] is None else str(data["recipient"]),
                content=to_json_value(data.get("content"), label="message content"),
                timestamp=datetime.fromisoformat(data["timestamp"]),
                metadata=_metadata(data.get("metadata")),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"invalid ChannelMessage data: {exc!r}") from exc

    def _copy(self) -> ChannelMessage:
        return dataclasses.replace(
            self, content=copy_json(self.content), metadata=copy_json(self.metadata)
        )


_Envelope: TypeAlias = tuple[int, ChannelMessage]
"""A message with its send-order sequence number."""


class Channel:
    """Direct messages and broadcasts between workers, safe to share across threads and tasks.

    Example:
        ```python
        channel = Channel()
        channel.send("worker_a", "worker_b", {"task": "analyze data"})
        channel.broadcast("manager", {"status": "starting"})
        for msg in channel.receive("worker_b"):
            print(msg.sender, msg.content)
        ```
    """

    def __init__(self) -> None:
        """Create an empty channel."""
        self._lock = threading.Lock()
        self._direct: dict[str, list[_Envelope]] = {}
        self._broadcasts: list[_Envelope] = []
        self._cursors: dict[str, int] = {}
        self._next_seq = 0

    def __repr__(self) -> str:
        """Show how many messages are held."""
        with self._lock:
            direct = sum(len(queue) for queue in self._direct.values())
            return f"Channel(direct={direct}, broadcasts={len(self._broadcasts)})"

    # ------------------------------------------------------------------- send

    def send(
        self,
        sender: str,
        recipient: str,
        content: Any,
        metadata: dict[str, Any] | None = None,
    ) -> ChannelMessage:
        """Send a direct message to ``recipient``.

        Args:
            sender: Name of the sending worker.
            recipient: Name of the receiving worker.
            content: Any JSON-serializable value (Pydantic models are dumped to JSON).
            metadata: Optional JSON-serializable extra data.

        Returns:
            The message as stored.

        Raises:
            TypeError: ``sender`` or ``recipient`` is not a string (``None`` is no
                recipient: use ``broadcast``), or ``content`` or ``metadata`` is not
                JSON-serializable or has a dict key holding a lone surrogate (no saved
                state could keep it).
        """
        check_name("recipient", recipient)
        return self._post(sender, recipient, content, metadata)

    def broadcast(
        self, sender: str, content: Any, metadata: dict[str, Any] | None = None
    ) -> ChannelMessage:
        """Send a message to every worker except ``sender``.

        Broadcasts are kept as a log until ``clear()``; see ``receive`` for how they are read.

        Raises:
            TypeError: ``sender`` is not a string, or ``content`` or ``metadata`` is not
                JSON-serializable or has a dict key holding a lone surrogate.
        """
        return self._post(sender, None, content, metadata)

    # ---------------------------------------------------------------- receive

    def receive(
        self, recipient: str, clear: bool = True, broadcast_mode: BroadcastMode = "one_shot"
    ) -> list[ChannelMessage]:
        """Return the messages for ``recipient``: its direct messages and broadcasts, in send order.

        Broadcasts sent by ``recipient`` itself are never included.

        Args:
            recipient: Name of the receiving worker.
            clear: Consume what is returned: remove the direct messages and mark the current
                broadcasts as seen by ``recipient``. With ``False`` nothing changes.
            broadcast_mode: ``"one_shot"`` returns only broadcasts ``recipient`` has not seen;
                ``"all"`` returns every broadcast in the log, seen or not.

        Raises:
            TypeError: ``recipient`` is not a string.
            ValueError: ``broadcast_mode`` is not ``"one_shot"`` or ``"all"``.
        """
        check_name("recipient", recipient)
        _check_mode(broadcast_mode)
        with self._lock:
            if clear:
                direct = self._direct.pop(recipient, [])
            else:
                direct = list(self._direct.get(recipient, ()))
            broadcasts = self._broadcasts_for(recipient, broadcast_mode)
            if clear:
                self._cursors[recipient] = self._next_seq
        return _in_order(direct, broadcasts)

    def peek(
        self, recipient: str, broadcast_mode: BroadcastMode = "one_shot"
    ) -> list[ChannelMessage]:
        """Return what ``receive(recipient)`` would return, without consuming anything."""
        return self.receive(recipient, clear=False, broadcast_mode=broadcast_mode)

    def all_messages(self) -> list[ChannelMessage]:
        """Return every held message: pending direct messages and the broadcast log, in order."""
        with self._lock:
            direct = [envelope for queue in self._direct.values() for envelope in queue]
            broadcasts = list(self._broadcasts)
        return _in_order(direct, broadcasts)

    def clear(self, recipient: str | None = None) -> None:
        """Drop messages.

        Args:
            recipient: With a name, drop that worker's pending direct messages and mark every
                current broadcast as seen by it. With ``None``, drop every direct message and
                the whole broadcast log.
        """
        with self._lock:
            if recipient is None:
                self._direct.clear()
                self._broadcasts.clear()
                self._cursors.clear()
            else:
                self._direct.pop(recipient, None)
                self._cursors[recipient] = self._next_seq

    # ------------------------------------------------------------- persistence

    def to_state(self) -> dict[str, Any]:
        """Return the held messages and each recipient's seen-broadcast position as JSON data."""
        with self._lock:
            envelopes = _in_order_envelopes(
                [envelope for queue in self._direct.values() for envelope in queue],
                self._broadcasts,
            )
            return {
                "version": _STATE_VERSION,
                "next_seq": self._next_seq,
                "messages": [{"seq": seq, **msg.to_dict()} for seq, msg in envelopes],
                "cursors": dict(self._cursors),
            }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Channel:
        """Build a new channel from the output of ``to_state``.

        Raises:
            ValueError: ``state`` is not a channel state.
        """
        channel = cls()
        channel.restore(state)
        return channel

    def restore(self, state: Mapping[str, Any]) -> None:
        """Replace the channel's contents with ``state`` (the output of ``to_state``).

        Raises:
            ValueError: ``state`` is not a channel state; the channel is then unchanged.
        """
        parsed = _parse_state(state)
        with self._lock:
            self._direct, self._broadcasts, self._cursors, self._next_seq = parsed

    # ------------------------------------------------------------------ async

    async def asend(
        self,
        sender: str,
        recipient: str,
        content: Any,
        metadata: dict[str, Any] | None = None,
    ) -> ChannelMessage:
        """Async ``send``, run in a worker thread."""
        return await asyncio.to_thread(self.send, sender, recipient, content, metadata)

    async def abroadcast(
        self, sender: str, content: Any, metadata: dict[str, Any] | None = None
    ) -> ChannelMessage:
        """Async ``broadcast``, run in a worker thread."""
        return await asyncio.to_thread(self.broadcast, sender, content, metadata)

    async def areceive(
        self, recipient: str, clear: bool = True, broadcast_mode: BroadcastMode = "one_shot"
    ) -> list[ChannelMessage]:
        """Async ``receive``, run in a worker thread."""
        return await asyncio.to_thread(self.receive, recipient, clear, broadcast_mode)

    async def apeek(
        self, recipient: str, broadcast_mode: BroadcastMode = "one_shot"
    ) -> list[ChannelMessage]:
        """Async ``peek``, run in a worker thread."""
        return await asyncio.to_thread(self.peek, recipient, broadcast_mode)

    async def aall_messages(self) -> list[ChannelMessage]:
        """Async ``all_messages``, run in a worker thread."""
        return await asyncio.to_thread(self.all_messages)

    async def aclear(self, recipient: str | None = None) -> None:
        """Async ``clear``, run in a worker thread."""
        await asyncio.to_thread(self.clear, recipient)

    # ---------------------------------------------------------------- private

    def _post(
        self, sender: str, recipient: str | None, content: Any, metadata: dict[str, Any] | None
    ) -> ChannelMessage:
        check_name("sender", sender)
        message = ChannelMessage(
            id=new_id(),
            sender=sender,
            recipient=recipient,
            content=to_json_value(content, label=f"message content from {sender!r}"),
            timestamp=utc_now(),
            metadata=_metadata(metadata),
        )
        with self._lock:
            envelope = (self._next_seq, message)
            self._next_seq += 1
            if recipient is None:
                self._broadcasts.append(envelope)
            else:
                self._direct.setdefault(recipient, []).append(envelope)
        return message._copy()

    def _broadcasts_for(self, recipient: str, mode: BroadcastMode) -> list[_Envelope]:
        """Broadcasts ``recipient`` should get in ``mode``. Call with the lock held."""
        first = self._cursors.get(recipient, 0) if mode == "one_shot" else 0
        return [
            (seq, msg) for seq, msg in self._broadcasts if seq >= first and msg.sender != recipient
        ]


def _check_mode(mode: str) -> None:
    if mode not in get_args(BroadcastMode):
        raise ValueError(f"broadcast_mode must be 'one_shot' or 'all', got {mode!r}")


def _metadata(metadata: Any) -> dict[str, Any]:
    """Return a private JSON copy of message metadata (``None`` means empty)."""
    if metadata is None:
        return {}
    value = to_json_value(metadata, label="message metadata")
    if not isinstance(value, dict):
        raise TypeError(f"message metadata must be a dict, got {type(metadata).__name__}")
    return value


def _in_order_envelopes(*groups: list[_Envelope]) -> list[_Envelope]:
    return sorted((envelope for group in groups for envelope in group), key=lambda e: e[0])


def _in_order(*groups: list[_Envelope]) -> list[ChannelMessage]:
    """Merge envelope lists by sequence number and return copies of the messages."""
    return [msg._copy() for _, msg in _in_order_envelopes(*groups)]


def _parse_state(
    state: Mapping[str, Any],
) -> tuple[dict[str, list[_Envelope]], list[_Envelope], dict[str, int], int]:
    """Validate a ``to_state`` dict and return (direct, broadcasts, cursors, next_seq)."""
    if not isinstance(state, Mapping) or state.get("version") != _STATE_VERSION:
        raise ValueError(f"not a Channel state (expected version {_STATE_VERSION})")
    try:
        next_seq = int(state["next_seq"])
        cursors = {str(name): int(seq) for name, seq in state["cursors"].items()}
        raw_messages = list(state["messages"])
        envelopes = [(int(raw["seq"]), ChannelMessage.from_dict(raw)) for raw in raw_messages]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"invalid Channel state: {exc!r}") from exc
    direct: dict[str, list[_Envelope]] = {}
    broadcasts: list[_Envelope] = []
    for envelope in sorted(envelopes, key=lambda e: e[0]):
        recipient = envelope[1].recipient
        if recipient is None:
            broadcasts.append(envelope)
        else:
            direct.setdefault(recipient, []).append(envelope)
    if envelopes:
        next_seq = max(next_seq, max(seq for seq, _ in envelopes) + 1)
    return direct, broadcasts, cursors, next_seq
