"""``StoreSessionManager``: graph sessions kept in a deskwork memory store.

``StoreSessionManager.from_database_url(desk.database_url)`` keeps graph sessions in the desk's
own database (SQLite at ``.deskwork/deskwork.db`` by default, or PostgreSQL), so another
process (or a new manager after a restart) reads what this one wrote. Layout, all under
``namespace``::

    <ns>.session.messages:<session_id>   one key per message ("<time_ns>-<id>", sorted = order)
    <ns>.session:<session_id>            "summary" and "memories" (one JSON document each)
    <ns>.sessions                        session_id -> {"users": [...]}  (null once cleared)
    <ns>.user:<user_id>                  session_id -> true  (sessions holding user's memories)

Behaviour matches :class:`InMemorySessionManager` (the rules are shared). Per-session locks
serialise writers inside one process; run one writer process per session. Store calls run
in a worker thread; a store failure raises :class:`SessionManagerError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from deskwork.core.redact import describe_exception
from deskwork.graph.core.exceptions import SessionManagerError
from deskwork.graph.session import _rules
from deskwork.graph.session.interface import SessionManager
from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary

if TYPE_CHECKING:
    from deskwork.memory.base import MemoryStore

__all__ = ["StoreSessionManager"]

_T = TypeVar("_T")
_Entries = dict[str, tuple[int, Memory]]


class StoreSessionManager(SessionManager):
    """All 13 session methods over a :class:`~deskwork.memory.MemoryStore`.

    ``close()`` only stops this manager; the stored data stays.
    """

    def __init__(self, memory_store: MemoryStore, *, namespace: str = "graph") -> None:
        """Args:
        memory_store: e.g. ``SQLiteMemoryStore(".deskwork/deskwork.db")``.
        namespace: prefix of every scope this manager writes.
        """
        self.memory_store = memory_store
        self.namespace = namespace
        self._locks: dict[str, asyncio.Lock] = {}
        self._last_tick = 0
        self._closed = False

    @classmethod
    def from_database_url(
        cls,
        database_url: str | None = None,
        *,
        storage_dir: str | Path = ".deskwork",
        namespace: str = "graph",
    ) -> Self:
        """A manager on deskwork's database: ``database_url``, else ``$DESKWORK_DATABASE_URL``,
        else SQLite at ``<storage_dir>/deskwork.db`` (pass ``desk.database_url`` to share a
        desk's database).

        Raises:
            deskwork.exceptions.ConfigurationError: an unsupported URL.
        """
        from deskwork.store._url import open_memory_store, resolve_database_url

        url = resolve_database_url(database_url, storage_dir)
        return cls(open_memory_store(url), namespace=namespace)

    def __repr__(self) -> str:
        store = type(self.memory_store).__name__
        return f"StoreSessionManager({store}, namespace={self.namespace!r}, closed={self._closed})"

    # -- plumbing ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")

    def _lock(self, session_id: str) -> asyncio.Lock:
        self._check_open()
        _rules.check_id(session_id, "session_id")
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    async def _run(self, call: Callable[..., _T], *args: Any) -> _T:
        try:
            return await asyncio.to_thread(call, *args)
        except ValueError:
            raise
        except Exception as exc:
            raise SessionManagerError(
                f"session store {getattr(call, '__name__', 'call')} failed:"
                f" {describe_exception(exc)}"
            ) from exc

    def _messages_scope(self, session_id: str) -> str:
        return f"{self.namespace}.session.messages:{session_id}"

    def _session_scope(self, session_id: str) -> str:
        return f"{self.namespace}.session:{session_id}"

    def _user_scope(self, user_id: str) -> str:
        return f"{self.namespace}.user:{user_id}"

    @property
    def _registry(self) -> str:
        return f"{self.namespace}.sessions"

    def _tick(self) -> int:
        self._last_tick = max(time.time_ns(), self._last_tick + 1)
        return self._last_tick

    # -- synchronous store work (runs in a worker thread) --------------------------------

    def _register(self, session_id: str, users: set[str]) -> None:
        store = self.memory_store
        known = store.read(session_id, self._registry)
        before = list(known.get("users", [])) if isinstance(known, dict) else None
        merged = sorted(set(before or ()) | users)
        if before != merged:
            store.write(session_id, {"users": merged}, self._registry)
        for user in users:
            store.write(session_id, True, self._user_scope(user))

    def _append(self, session_id: str, messages: list[SessionMessage]) -> None:
        scope = self._messages_scope(session_id)
        for message in messages:
            key = f"{self._tick():020d}-{message.id}"
            self.memory_store.write(key, message.model_dump(mode="json"), scope)
        self._register(session_id, {m.user_id for m in messages if m.user_id is not None})

    def _load_messages(self, session_id: str) -> list[SessionMessage]:
        rows = self.memory_store.search("", self._messages_scope(session_id))
        return [SessionMessage.model_validate(value) for _, value in sorted(rows)]

    def _load_memories(self, session_id: str) -> _Entries:
        doc = self.memory_store.read("memories", self._session_scope(session_id)) or {}
        return {
            memory_id: (int(ordinal), Memory.model_validate(data))
            for memory_id, (ordinal, data) in doc.get("items", {}).items()
        }

    def _save_memories(self, session_id: str, entries: _Entries) -> None:
        items = {i: [o, m.model_dump(mode="json")] for i, (o, m) in entries.items()}
        self.memory_store.write("memories", {"items": items}, self._session_scope(session_id))

    def _store_memory(self, session_id: str, memory: Memory, user_id: str | None) -> None:
        entries = self._load_memories(session_id)
        key = getattr(memory, "key", "")
        existing = next((m for _, m in entries.values() if m.key == key), None)
        stored = _rules.owned_memory(session_id, memory, user_id, existing)
        if existing is not None:
            del entries[existing.id]
        ordinal = max((o for o, _ in entries.values()), default=0) + 1
        entries[stored.id] = (ordinal, stored)
        self._save_memories(session_id, entries)
        self._register(session_id, {stored.user_id} if stored.user_id else set())

    def _clear(self, session_id: str) -> None:
        store = self.memory_store
        store.reset(self._messages_scope(session_id))
        store.reset(self._session_scope(session_id))
        if store.read(session_id, self._registry) is not None:
            store.write(session_id, None, self._registry)  # the store cannot delete one key

    def _user_memories(self, user_id: str) -> list[Memory]:
        sessions = [sid for sid, _ in self.memory_store.search("", self._user_scope(user_id))]
        return [
            memory
            for sid in sessions
            for _, memory in self._load_memories(sid).values()
            if memory.user_id == user_id
        ]

    # -- messages ------------------------------------------------------------------------

    async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
        checked = _rules.check_messages(session_id, messages)
        async with self._lock(session_id):
            if checked:
                await self._run(self._append, session_id, checked)

    async def get_messages(
        self, session_id: str, limit: int = 50, user_id: str | None = None
    ) -> list[SessionMessage]:
        """The last ``limit`` messages, oldest first (``[]`` if ``user_id`` may not read).

        Raises:
            ValueError: ``limit`` < 1.
        """
        _rules.check_limit(limit)
        async with self._lock(session_id):
            messages = await self._run(self._load_messages, session_id)
        return messages[-limit:] if _rules.may_read_session(messages, user_id) else []

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
        async with self._lock(session_id):
            messages = await self._run(self._load_messages, session_id)
        if not _rules.may_read_session(messages, user_id):
            messages = []
        return _rules.page(list(enumerate(messages)), cursor, limit)

    async def clear_session(self, session_id: str) -> None:
        """Remove the session's messages, summary and memories."""
        async with self._lock(session_id):
            await self._run(self._clear, session_id)

    # -- summaries -----------------------------------------------------------------------

    async def save_summary(self, session_id: str, summary: Summary) -> None:
        checked = _rules.check_summary(session_id, summary)
        data = checked.model_dump(mode="json")
        users = {checked.user_id} if checked.user_id else set()
        async with self._lock(session_id):
            await self._run(
                self.memory_store.write, "summary", data, self._session_scope(session_id)
            )
            await self._run(self._register, session_id, users)

    async def get_summary(self, session_id: str) -> Summary | None:
        async with self._lock(session_id):
            data = await self._run(
                self.memory_store.read, "summary", self._session_scope(session_id)
            )
        return None if data is None else Summary.model_validate(data)

    # -- memories ------------------------------------------------------------------------

    async def store_memory(
        self, session_id: str, memory: Memory, user_id: str | None = None
    ) -> None:
        """Store ``memory`` (filling in ``user_id``), replacing the session's memory of that key.

        Raises:
            ValueError: wrong session, conflicting owner, or the key belongs to another user.
        """
        async with self._lock(session_id):
            await self._run(self._store_memory, session_id, memory, user_id)

    async def recall_memory(self, session_id: str, key: str) -> Memory | None:
        async with self._lock(session_id):
            entries = await self._run(self._load_memories, session_id)
        found = next((m for _, m in entries.values() if m.key == key), None)
        return None if found is None or found.is_expired() else found

    async def search_memories(self, session_id: str, query: str, limit: int = 5) -> list[Memory]:
        """Raises: ValueError: ``limit`` < 1."""
        _rules.check_limit(limit)
        async with self._lock(session_id):
            entries = await self._run(self._load_memories, session_id)
        return _rules.rank_memories((m for _, m in entries.values()), query, limit)

    async def search_memories_by_user(
        self, user_id: str, query: str, limit: int = 10
    ) -> list[Memory]:
        """Raises: ValueError: ``limit`` < 1 or an empty ``user_id``."""
        self._check_open()
        _rules.check_id(user_id, "user_id")
        _rules.check_limit(limit)
        memories = await self._run(self._user_memories, user_id)
        return _rules.rank_memories(memories, query, limit)

    async def update_memory(
        self,
        session_id: str,
        memory_id: str,
        updates: Mapping[str, Any],
        user_id: str | None = None,
    ) -> Memory | None:
        """Raises: ValueError: ``updates`` names a non-content field or holds a bad value."""
        async with self._lock(session_id):
            entries = await self._run(self._load_memories, session_id)
            entry = entries.get(memory_id)
            if entry is None or not _rules.may_touch_memory(entry[1], user_id):
                return None
            updated = _rules.apply_memory_update(entry[1], updates)
            entries[memory_id] = (entry[0], updated)
            await self._run(self._save_memories, session_id, entries)
            return updated

    async def delete_memory(
        self, session_id: str, memory_id: str, user_id: str | None = None
    ) -> bool:
        async with self._lock(session_id):
            entries = await self._run(self._load_memories, session_id)
            entry = entries.get(memory_id)
            if entry is None or not _rules.may_touch_memory(entry[1], user_id):
                return False
            del entries[memory_id]
            await self._run(self._save_memories, session_id, entries)
            return True

    async def list_memories(
        self, session_id: str, cursor: str | None = None, limit: int = 20
    ) -> PaginatedResult[Memory]:
        """Unexpired memories in the order stored.

        Raises:
            ValueError: ``limit`` < 1 or a cursor this manager did not write.
        """
        _rules.check_limit(limit)
        async with self._lock(session_id):
            entries = await self._run(self._load_memories, session_id)
        live = sorted((e for e in entries.values() if not e[1].is_expired()), key=lambda e: e[0])
        return _rules.page(live, cursor, limit)

    # -- utility -------------------------------------------------------------------------

    def _count_sessions(self) -> int:
        return sum(1 for _, v in self.memory_store.search("", self._registry) if v is not None)

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok", "sessions": n}``, ``"error"`` if the store fails, ``"closed"``."""
        if self._closed:
            return {"status": "closed", "sessions": 0}
        try:
            sessions = await asyncio.to_thread(self._count_sessions)
        except Exception as exc:  # a health probe reports, never raises
            error = f"{describe_exception(exc)}"
            return {"status": "error", "sessions": 0, "error": error}
        return {"status": "ok", "sessions": sessions}

    async def close(self) -> None:
        """Refuse further calls (stored data stays). Safe to call twice."""
        self._closed = True
        self._locks.clear()
