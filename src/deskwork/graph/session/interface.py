"""``SessionManager``: the session-layer port (messages, summaries, memories).

Three methods are abstract (``save_messages``, ``get_messages``, ``clear_session``); the other
ten raise ``NotImplementedError`` until a subclass overrides them, and
:meth:`SessionManager.get_capabilities` reports which ones it did.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary

__all__ = ["CORE_METHODS", "OPTIONAL_METHODS", "SessionManager"]

CORE_METHODS: tuple[str, ...] = ("save_messages", "get_messages", "clear_session")
"""The abstract methods every session manager has."""

OPTIONAL_METHODS: tuple[str, ...] = (
    "save_summary",
    "get_summary",
    "store_memory",
    "recall_memory",
    "search_memories",
    "search_memories_by_user",
    "get_messages_paginated",
    "update_memory",
    "delete_memory",
    "list_memories",
)
"""Methods that raise ``NotImplementedError`` unless a subclass overrides them."""


class SessionManager(ABC):
    """Conversation history, summaries and memories of graph sessions.

    Supports ``async with`` (``close()`` on exit).
    """

    _closed: bool = False

    # -- abstract ------------------------------------------------------------------------

    @abstractmethod
    async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
        """Append ``messages`` to the session."""

    @abstractmethod
    async def get_messages(
        self, session_id: str, limit: int = 50, user_id: str | None = None
    ) -> list[SessionMessage]:
        """The most recent ``limit`` messages, oldest first."""

    @abstractmethod
    async def clear_session(self, session_id: str) -> None:
        """Remove everything stored for the session."""

    # -- optional ------------------------------------------------------------------------

    def _unsupported(self, method: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} does not implement {method}()")

    async def save_summary(self, session_id: str, summary: Summary) -> None:
        """Store the session's summary (replacing the previous one)."""
        raise self._unsupported("save_summary")

    async def get_summary(self, session_id: str) -> Summary | None:
        """The session's summary, or ``None``."""
        raise self._unsupported("get_summary")

    async def store_memory(
        self, session_id: str, memory: Memory, user_id: str | None = None
    ) -> None:
        """Store a memory (replacing one with the same key in the session)."""
        raise self._unsupported("store_memory")

    async def recall_memory(self, session_id: str, key: str) -> Memory | None:
        """The unexpired memory stored under ``key``, or ``None``."""
        raise self._unsupported("recall_memory")

    async def search_memories(self, session_id: str, query: str, limit: int = 5) -> list[Memory]:
        """Unexpired memories matching ``query``, most important first."""
        raise self._unsupported("search_memories")

    async def search_memories_by_user(
        self, user_id: str, query: str, limit: int = 10
    ) -> list[Memory]:
        """Unexpired memories of ``user_id`` across all sessions, most important first."""
        raise self._unsupported("search_memories_by_user")

    async def get_messages_paginated(
        self,
        session_id: str,
        cursor: str | None = None,
        limit: int = 50,
        user_id: str | None = None,
    ) -> PaginatedResult[SessionMessage]:
        """One page of messages, oldest first; ``cursor`` comes from the previous page."""
        raise self._unsupported("get_messages_paginated")

    async def update_memory(
        self,
        session_id: str,
        memory_id: str,
        updates: Mapping[str, Any],
        user_id: str | None = None,
    ) -> Memory | None:
        """Change a memory's content fields; ``None`` if it is absent or not the caller's."""
        raise self._unsupported("update_memory")

    async def delete_memory(
        self, session_id: str, memory_id: str, user_id: str | None = None
    ) -> bool:
        """Delete a memory; ``False`` if it is absent or not the caller's."""
        raise self._unsupported("delete_memory")

    async def list_memories(
        self, session_id: str, cursor: str | None = None, limit: int = 20
    ) -> PaginatedResult[Memory]:
        """One page of the session's unexpired memories, oldest first."""
        raise self._unsupported("list_memories")

    # -- utility -------------------------------------------------------------------------

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok"}``; override to check the backend."""
        return {"status": "ok"}

    def get_capabilities(self) -> set[str]:
        """Names of the methods this manager implements (the 3 core ones plus overrides)."""
        cls = type(self)
        overridden = {
            name
            for name in OPTIONAL_METHODS
            if getattr(cls, name) is not getattr(SessionManager, name)
        }
        return set(CORE_METHODS) | overridden

    @property
    def is_closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    async def close(self) -> None:
        """Release resources; later calls raise ``RuntimeError`` in the shipped managers."""
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
