"""``InMemorySessionManager``: every session method, kept in dictionaries (dev and tests).

Each session has its own ``asyncio.Lock``; work on one session never waits for another.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

from deskwork.graph.session import _rules
from deskwork.graph.session.interface import SessionManager
from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary

__all__ = ["InMemorySessionManager"]


class InMemorySessionManager(SessionManager):
    """Messages, summaries and memories in memory; all 13 session methods implemented.

    ``close()`` clears everything; any later call raises ``RuntimeError``.
    """

    def __init__(self) -> None:
        self._messages: dict[str, list[SessionMessage]] = {}
        self._summaries: dict[str, Summary] = {}
        self._memories: dict[str, dict[str, tuple[int, Memory]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._ordinals = itertools.count(1)
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"sessions={len(self._session_ids())}"
        return f"InMemorySessionManager({state})"

    def _open(self, session_id: str) -> asyncio.Lock:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        _rules.check_id(session_id, "session_id")
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    def _session_ids(self) -> set[str]:
        return set(self._messages) | set(self._summaries) | set(self._memories)

    # -- messages ------------------------------------------------------------------------

    async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
        checked = _rules.check_messages(session_id, messages)
        async with self._open(session_id):
            if checked:
                self._messages.setdefault(session_id, []).extend(checked)

    async def get_messages(
        self, session_id: str, limit: int = 50, user_id: str | None = None
    ) -> list[SessionMessage]:
        """The last ``limit`` messages, oldest first (``[]`` if ``user_id`` may not read).

        Raises:
            ValueError: ``limit`` < 1.
        """
        _rules.check_limit(limit)
        async with self._open(session_id):
            messages = list(self._messages.get(session_id, ()))
        if not _rules.may_read_session(messages, user_id):
            return []
        return messages[-limit:]

    async def get_messages_paginated(
        self,
        session_id: str,
        cursor: str | None = None,
        limit: int = 50,
        user_id: str | None = None,
    ) -> PaginatedResult[SessionMessage]:
        """Messages oldest first, ``limit`` per page.

        Raises:
            ValueError: ``limit`` < 1 or a cursor this manager did not write.
        """
        _rules.check_limit(limit)
        async with self._open(session_id):
            messages = list(self._messages.get(session_id, ()))
        if not _rules.may_read_session(messages, user_id):
            messages = []
        return _rules.page(list(enumerate(messages)), cursor, limit)

    async def clear_session(self, session_id: str) -> None:
        """Remove the session's messages, summary and memories (its lock stays)."""
        async with self._open(session_id):
            self._messages.pop(session_id, None)
            self._summaries.pop(session_id, None)
            self._memories.pop(session_id, None)

    # -- summaries -----------------------------------------------------------------------

    async def save_summary(self, session_id: str, summary: Summary) -> None:
        checked = _rules.check_summary(session_id, summary)
        async with self._open(session_id):
            self._summaries[session_id] = checked

    async def get_summary(self, session_id: str) -> Summary | None:
        async with self._open(session_id):
            return self._summaries.get(session_id)

    # -- memories ------------------------------------------------------------------------

    def _find_key(self, session_id: str, key: str) -> Memory | None:
        for _, memory in self._memories.get(session_id, {}).values():
            if memory.key == key:
                return memory
        return None

    async def store_memory(
        self, session_id: str, memory: Memory, user_id: str | None = None
    ) -> None:
        """Store ``memory`` (filling in ``user_id``), replacing the session's memory of that key.

        Raises:
            ValueError: wrong session, conflicting owner, or the key belongs to another user.
        """
        async with self._open(session_id):
            existing = self._find_key(session_id, getattr(memory, "key", ""))
            stored = _rules.owned_memory(session_id, memory, user_id, existing)
            table = self._memories.setdefault(session_id, {})
            if existing is not None:
                del table[existing.id]
            table[stored.id] = (next(self._ordinals), stored)

    async def recall_memory(self, session_id: str, key: str) -> Memory | None:
        async with self._open(session_id):
            memory = self._find_key(session_id, key)
        return None if memory is None or memory.is_expired() else memory

    async def search_memories(self, session_id: str, query: str, limit: int = 5) -> list[Memory]:
        """Raises: ValueError: ``limit`` < 1."""
        _rules.check_limit(limit)
        async with self._open(session_id):
            memories = [m for _, m in self._memories.get(session_id, {}).values()]
        return _rules.rank_memories(memories, query, limit)

    async def search_memories_by_user(
        self, user_id: str, query: str, limit: int = 10
    ) -> list[Memory]:
        """Raises: ValueError: ``limit`` < 1 or an empty ``user_id``."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        _rules.check_id(user_id, "user_id")
        _rules.check_limit(limit)
        owned = [
            memory
            for table in list(self._memories.values())
            for _, memory in table.values()
            if memory.user_id == user_id
        ]
        return _rules.rank_memories(owned, query, limit)

    async def update_memory(
        self,
        session_id: str,
        memory_id: str,
        updates: Mapping[str, Any],
        user_id: str | None = None,
    ) -> Memory | None:
        """Raises: ValueError: ``updates`` names a non-content field or holds a bad value."""
        async with self._open(session_id):
            entry = self._memories.get(session_id, {}).get(memory_id)
            if entry is None or not _rules.may_touch_memory(entry[1], user_id):
                return None
            updated = _rules.apply_memory_update(entry[1], updates)
            self._memories[session_id][memory_id] = (entry[0], updated)
            return updated

    async def delete_memory(
        self, session_id: str, memory_id: str, user_id: str | None = None
    ) -> bool:
        async with self._open(session_id):
            table = self._memories.get(session_id, {})
            entry = table.get(memory_id)
            if entry is None or not _rules.may_touch_memory(entry[1], user_id):
                return False
            del table[memory_id]
            return True

    async def list_memories(
        self, session_id: str, cursor: str | None = None, limit: int = 20
    ) -> PaginatedResult[Memory]:
        """Unexpired memories in the order stored.

        Raises:
            ValueError: ``limit`` < 1 or a cursor this manager did not write.
        """
        _rules.check_limit(limit)
        async with self._open(session_id):
            entries = sorted(self._memories.get(session_id, {}).values(), key=lambda e: e[0])
        live = [(ordinal, m) for ordinal, m in entries if not m.is_expired()]
        return _rules.page(live, cursor, limit)

    # -- utility -------------------------------------------------------------------------

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok", "sessions": n}``, or ``{"status": "closed", "sessions": 0}``."""
        if self._closed:
            return {"status": "closed", "sessions": 0}
        return {"status": "ok", "sessions": len(self._session_ids())}

    async def close(self) -> None:
        """Clear all data and refuse further calls. Safe to call twice."""
        self._closed = True
        self._messages.clear()
        self._summaries.clear()
        self._memories.clear()
        self._locks.clear()
