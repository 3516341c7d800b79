"""Keeping a realtime session's blackboard in a deskwork ``SessionStore``.

A board is saved as one message of a session of its own, ``realtime:<session_id>`` (worker
name ``deskwork.realtime``), so it never mixes with a worker's chat history of the same id::

    board.save_to(desk.session_store, "call-1")       # after a turn
    board = Blackboard.load_from(desk.session_store, "call-1") or Blackboard()

The message holds ``Blackboard.to_state()`` (containers with authors and versions) in its
``metadata``; saving replaces the previous copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final

from deskwork.collaboration._blackboard import check_name
from deskwork.core.message import Message

if TYPE_CHECKING:
    from deskwork.store.session import SessionStore

__all__ = [
    "BOARD_MESSAGE_NAME",
    "STORE_WORKER_NAME",
    "check_store",
    "load_board_state",
    "save_board",
    "store_id",
]

BOARD_MESSAGE_NAME: Final = "deskwork.realtime.blackboard"
"""``Message.name`` of the stored board."""
STORE_WORKER_NAME: Final = "deskwork.realtime"
"""``worker_name`` of the sessions that hold boards."""


def check_store(store: Any) -> None:
    """Refuse a ``store`` that is not a ``SessionStore`` (e.g. the desk instead of
    ``desk.session_store``), naming what was given.

    Raises:
        TypeError: ``store`` is not a ``SessionStore``.
    """
    from deskwork.store.session import SessionStore

    if not isinstance(store, SessionStore):
        raise TypeError(
            f"store must be a SessionStore (e.g. desk.session_store), got {type(store).__name__}"
        )


def store_id(session_id: str) -> str:
    """The session-store id under which ``session_id``'s board is kept.

    Raises:
        TypeError: ``session_id`` is not a string (``None`` would be kept as
            ``"realtime:None"``, shared by every such call).
        ValueError: ``session_id`` is empty.
    """
    check_name("session_id", session_id)
    if not session_id:
        raise ValueError("session_id must not be empty")
    return f"realtime:{session_id}"


def save_board(store: SessionStore, session_id: str, state: Mapping[str, Any]) -> None:
    """Save a board state (``Blackboard.to_state()``) for ``session_id``, replacing any."""
    check_store(store)
    key = store_id(session_id)
    if store.get_session(key) is None:
        with suppress(ValueError):  # created meanwhile by a concurrent save
            store.create_session(key, STORE_WORKER_NAME, {"realtime_session_id": session_id})
    message = Message(role="system", name=BOARD_MESSAGE_NAME, metadata={"blackboard": dict(state)})
    store.replace_messages(key, [message])


def load_board_state(store: SessionStore, session_id: str) -> dict[str, Any] | None:
    """The last board state saved for ``session_id``, or ``None``."""
    check_store(store)
    key = store_id(session_id)
    if store.get_session(key) is None:
        return None
    for message in reversed(store.get_messages(key)):
        state = message.metadata.get("blackboard")
        if message.name == BOARD_MESSAGE_NAME and isinstance(state, dict):
            return state
    return None
