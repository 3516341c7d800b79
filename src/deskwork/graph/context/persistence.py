"""Durable storage for SESSION slots (per session) and LONG_TERM slots (per user).

Every ``save_*`` call replaces the whole stored set for its session or user, so a slot that
was evicted or demoted since the last flush disappears from storage too.

- :class:`InMemorySlotPersistence`: dictionaries, deep-copied in and out (dev and tests).
- :class:`StoreSlotPersistence`: any deskwork :class:`~deskwork.memory.MemoryStore`.
  ``StoreSlotPersistence.from_database_url(desk.database_url)`` puts graph slots in the desk's
  own database (SQLite at ``.deskwork/deskwork.db`` by default, or PostgreSQL).
"""

from __future__ import annotations

import asyncio
import copy
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from deskwork.core.redact import describe_exception
from deskwork.graph.context.slots import Slot, SlotTier

if TYPE_CHECKING:
    from deskwork.memory.base import MemoryStore

__all__ = ["InMemorySlotPersistence", "SlotPersistence", "StoreSlotPersistence"]


class SlotPersistence(ABC):
    """Where SESSION and LONG_TERM slots survive a process restart."""

    @abstractmethod
    async def load_session_slots(self, session_id: str) -> list[Slot]:
        """The SESSION slots saved for ``session_id`` (``[]`` if none)."""

    @abstractmethod
    async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None:
        """Replace the SESSION slots saved for ``session_id``."""

    @abstractmethod
    async def load_long_term_slots(self, user_id: str) -> list[Slot]:
        """The LONG_TERM slots saved for ``user_id`` (``[]`` if none)."""

    @abstractmethod
    async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None:
        """Replace the LONG_TERM slots saved for ``user_id``."""

    async def delete_session_slots(self, session_id: str) -> None:
        """Forget the SESSION slots of ``session_id`` (default: save an empty set)."""
        await self.save_session_slots(session_id, [])

    async def delete_long_term_slots(self, user_id: str) -> None:
        """Forget the LONG_TERM slots of ``user_id`` (default: save an empty set)."""
        await self.save_long_term_slots(user_id, [])

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok"}``; override to check connectivity or latency."""
        return {"status": "ok"}


class InMemorySlotPersistence(SlotPersistence):
    """Slots in dictionaries; values are deep-copied so callers cannot mutate what is stored."""

    def __init__(self) -> None:
        self._session: dict[str, list[Slot]] = {}
        self._long_term: dict[str, list[Slot]] = {}

    async def load_session_slots(self, session_id: str) -> list[Slot]:
        return copy.deepcopy(self._session.get(session_id, []))

    async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None:
        _put(self._session, session_id, copy.deepcopy(list(slots)))

    async def delete_session_slots(self, session_id: str) -> None:
        self._session.pop(session_id, None)

    async def load_long_term_slots(self, user_id: str) -> list[Slot]:
        return copy.deepcopy(self._long_term.get(user_id, []))

    async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None:
        _put(self._long_term, user_id, copy.deepcopy(list(slots)))

    async def delete_long_term_slots(self, user_id: str) -> None:
        self._long_term.pop(user_id, None)

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok", "session_slots": n, "long_term_slots": m}`` (slot counts)."""
        return {
            "status": "ok",
            "session_slots": sum(len(v) for v in self._session.values()),
            "long_term_slots": sum(len(v) for v in self._long_term.values()),
        }


def _put(table: dict[str, list[Slot]], owner: str, slots: list[Slot]) -> None:
    if slots:
        table[owner] = slots
    else:
        table.pop(owner, None)


_SLOTS_KEY = "slots"


class StoreSlotPersistence(SlotPersistence):
    """Slots kept in a deskwork memory store (SQLite, in-memory, or any other backend).

    Each session's (and each user's) slot set is one JSON document under key ``"slots"`` in
    scope ``"<namespace>.slots.session:<session_id>"`` (``...long_term:<user_id>``), so a save
    replaces the set in one write. Slot values must be JSON-compatible. Store calls run in a
    worker thread, so a SQLite write never blocks the event loop.
    """

    def __init__(self, memory_store: MemoryStore, *, namespace: str = "graph") -> None:
        """Args:
        memory_store: the store, e.g. ``SQLiteMemoryStore(".deskwork/deskwork.db")``.
        namespace: prefix of every scope this backend writes.
        """
        self.memory_store = memory_store
        self.namespace = namespace

    @classmethod
    def from_database_url(
        cls,
        database_url: str | None = None,
        *,
        storage_dir: str | Path = ".deskwork",
        namespace: str = "graph",
    ) -> Self:
        """A backend on deskwork's database: ``database_url``, else ``$DESKWORK_DATABASE_URL``,
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
        return f"StoreSlotPersistence({store}, namespace={self.namespace!r})"

    def _scope(self, tier: SlotTier, owner: str) -> str:
        if not isinstance(owner, str) or not owner:
            raise ValueError(f"a {tier} slot owner id must be a non-empty string, got {owner!r}")
        return f"{self.namespace}.slots.{tier}:{owner}"

    async def _load(self, tier: SlotTier, owner: str) -> list[Slot]:
        scope = self._scope(tier, owner)
        raw = await asyncio.to_thread(self.memory_store.read, _SLOTS_KEY, scope)
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise ValueError(f"stored slots in scope {scope!r} are not a list")
        return [_decode(item, scope) for item in raw]

    async def _save(self, tier: SlotTier, owner: str, slots: list[Slot]) -> None:
        scope = self._scope(tier, owner)
        if not slots:
            await asyncio.to_thread(self.memory_store.reset, scope)
            return
        document = [_encode(slot) for slot in slots]
        await asyncio.to_thread(self.memory_store.write, _SLOTS_KEY, document, scope)

    async def load_session_slots(self, session_id: str) -> list[Slot]:
        return await self._load(SlotTier.SESSION, session_id)

    async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None:
        await self._save(SlotTier.SESSION, session_id, slots)

    async def load_long_term_slots(self, user_id: str) -> list[Slot]:
        return await self._load(SlotTier.LONG_TERM, user_id)

    async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None:
        await self._save(SlotTier.LONG_TERM, user_id, slots)

    async def health_check(self) -> dict[str, Any]:
        """``{"status": "ok", "backend": ...}``, or ``"error"`` with the failure."""
        backend = type(self.memory_store).__name__
        try:
            await asyncio.to_thread(
                self.memory_store.read, _SLOTS_KEY, f"{self.namespace}.slots.health"
            )
        except Exception as exc:  # a health probe reports, never raises
            error = f"{describe_exception(exc)}"
            return {"status": "error", "backend": backend, "error": error}
        return {"status": "ok", "backend": backend}


def _encode(slot: Slot) -> dict[str, Any]:
    try:
        json.dumps(slot.value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"slot {slot.key!r} holds a value JSON cannot store: {exc}") from exc
    return {
        "key": slot.key,
        "value": slot.value,
        "priority": slot.priority,
        "tier": str(slot.tier),
        "created_at": slot.created_at,
        "accessed_at": slot.accessed_at,
        "tokens": slot.tokens,
    }


def _decode(item: Any, scope: str) -> Slot:
    try:
        return Slot(
            key=str(item["key"]),
            value=item["value"],
            priority=int(item.get("priority", 0)),
            tier=SlotTier(item.get("tier", SlotTier.TURN)),
            created_at=float(item["created_at"]),
            accessed_at=float(item["accessed_at"]),
            tokens=int(item.get("tokens", 0)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"malformed slot record in scope {scope!r}: {exc!r}") from exc
