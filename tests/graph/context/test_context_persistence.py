"""Slot persistence backends: the ABC defaults, in-memory isolation, deskwork's memory stores."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from deskwork.graph.config.schema import ContextConfig
from deskwork.graph.context.manager import SlotManager
from deskwork.graph.context.persistence import (
    InMemorySlotPersistence,
    SlotPersistence,
    StoreSlotPersistence,
)
from deskwork.graph.context.slots import Slot, SlotTier
from deskwork.graph.core.exceptions import SlotPersistenceError
from deskwork.memory import ExternalMemoryStore, InMemoryMemoryStore, SQLiteMemoryStore
from deskwork.memory.base import MemoryStore
from deskwork.store.session import SQLiteSessionStore


def session_slot(key: str, value: Any, priority: int = 0) -> Slot:
    return Slot(key, value, priority, SlotTier.SESSION, 100.0, 200.0, 1)


class DictPersistence(SlotPersistence):
    """The four abstract methods only, to exercise the ABC's defaults."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], list[Slot]] = {}

    async def load_session_slots(self, session_id: str) -> list[Slot]:
        return list(self.data.get(("s", session_id), []))

    async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None:
        self.data[("s", session_id)] = list(slots)

    async def load_long_term_slots(self, user_id: str) -> list[Slot]:
        return list(self.data.get(("u", user_id), []))

    async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None:
        self.data[("u", user_id)] = list(slots)


def test_the_abc_requires_the_four_load_and_save_methods() -> None:
    with pytest.raises(TypeError):
        SlotPersistence()  # type: ignore[abstract]


async def test_abc_defaults_health_check_and_delete_by_saving_nothing() -> None:
    backend = DictPersistence()
    assert await backend.health_check() == {"status": "ok"}
    await backend.save_session_slots("s1", [session_slot("a", 1)])
    await backend.save_long_term_slots("alice", [session_slot("b", 2)])
    await backend.delete_session_slots("s1")
    await backend.delete_long_term_slots("alice")
    assert await backend.load_session_slots("s1") == []
    assert await backend.load_long_term_slots("alice") == []


async def test_in_memory_persistence_isolates_stored_slots_from_callers() -> None:
    backend = InMemorySlotPersistence()
    slots = [session_slot("doc", {"items": [1, 2]})]
    await backend.save_session_slots("s1", slots)
    slots[0].value["items"].append(3)  # mutate after saving
    slots.append(session_slot("extra", 1))
    loaded = await backend.load_session_slots("s1")
    assert [(s.key, s.value) for s in loaded] == [("doc", {"items": [1, 2]})]
    loaded[0].value["items"].clear()  # mutate what was loaded
    again = await backend.load_session_slots("s1")
    assert again[0].value == {"items": [1, 2]}


async def test_in_memory_health_check_counts_slots_and_delete_forgets() -> None:
    backend = InMemorySlotPersistence()
    await backend.save_session_slots("s1", [session_slot("a", 1), session_slot("b", 2)])
    await backend.save_session_slots("s2", [session_slot("c", 3)])
    await backend.save_long_term_slots("alice", [session_slot("d", 4)])
    assert await backend.health_check() == {
        "status": "ok",
        "session_slots": 3,
        "long_term_slots": 1,
    }
    await backend.delete_session_slots("s1")
    await backend.delete_long_term_slots("alice")
    assert await backend.health_check() == {
        "status": "ok",
        "session_slots": 1,
        "long_term_slots": 0,
    }


# -- StoreSlotPersistence over deskwork memory stores ------------------------------------


@pytest.fixture(params=["in-memory", "sqlite", "postgres"])
def memory_store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    if request.param == "sqlite":
        return SQLiteMemoryStore(tmp_path / "deskwork.db")
    if request.param == "postgres":
        backend = StoreSlotPersistence.from_database_url(request.getfixturevalue("postgres_url"))
        return backend.memory_store
    return InMemoryMemoryStore()


async def test_store_persistence_round_trips_every_slot_field(memory_store: MemoryStore) -> None:
    backend = StoreSlotPersistence(memory_store)
    slot = Slot("prefs", {"theme": "dark", "sizes": [1, 2]}, 4, SlotTier.SESSION, 1.5, 2.5, 7)
    await backend.save_session_slots("s1", [slot])
    lt = Slot("name", "Alice", 0, SlotTier.LONG_TERM, 3.0, 4.0, 2)
    await backend.save_long_term_slots("alice", [lt])
    assert await backend.load_session_slots("s1") == [slot]
    assert await backend.load_long_term_slots("alice") == [lt]
    assert await backend.load_session_slots("other") == []
    assert await backend.load_long_term_slots("bob") == []


async def test_store_persistence_save_replaces_and_empty_save_deletes(
    memory_store: MemoryStore,
) -> None:
    backend = StoreSlotPersistence(memory_store)
    await backend.save_session_slots("s1", [session_slot("a", 1), session_slot("b", 2)])
    await backend.save_session_slots("s1", [session_slot("b", 3)])
    assert [(s.key, s.value) for s in await backend.load_session_slots("s1")] == [("b", 3)]
    await backend.delete_session_slots("s1")
    assert await backend.load_session_slots("s1") == []
    assert memory_store.read("slots", "graph.slots.session:s1") is None


async def test_store_persistence_namespaces_do_not_collide(memory_store: MemoryStore) -> None:
    one = StoreSlotPersistence(memory_store, namespace="app1")
    two = StoreSlotPersistence(memory_store, namespace="app2")
    await one.save_session_slots("s1", [session_slot("a", 1)])
    assert await two.load_session_slots("s1") == []


async def test_a_value_json_cannot_hold_fails_the_flush_cleanly(memory_store: MemoryStore) -> None:
    manager = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(memory_store))
    manager.set_shared_tiered("ok", "fine", SlotTier.SESSION)
    await manager.flush("s1")
    manager.set_shared_tiered("bad", {1, 2}, SlotTier.SESSION)
    with pytest.raises(SlotPersistenceError, match="JSON cannot store"):
        await manager.flush("s1")
    stored = await StoreSlotPersistence(memory_store).load_session_slots("s1")
    assert [s.key for s in stored] == ["ok"]  # the previous flush is intact


async def test_a_corrupt_stored_document_is_a_slot_persistence_error(
    memory_store: MemoryStore,
) -> None:
    memory_store.write("slots", [{"key": "a"}], "graph.slots.session:s1")
    manager = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(memory_store))
    manager.set_shared("mine", 1)
    with pytest.raises(SlotPersistenceError, match="malformed slot record"):
        await manager.hydrate("s1")
    assert manager.shared_values() == {"mine": 1}


async def test_store_persistence_rejects_empty_owner_ids() -> None:
    backend = StoreSlotPersistence(InMemoryMemoryStore())
    with pytest.raises(ValueError, match="non-empty"):
        await backend.load_long_term_slots("")


async def test_store_persistence_health_check_reports_the_backend() -> None:
    assert await StoreSlotPersistence(InMemoryMemoryStore()).health_check() == {
        "status": "ok",
        "backend": "InMemoryMemoryStore",
    }
    broken = await StoreSlotPersistence(ExternalMemoryStore()).health_check()
    assert broken["status"] == "error" and "NotImplementedError" in broken["error"]


async def test_a_broken_store_surfaces_as_slot_persistence_error() -> None:
    manager = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(ExternalMemoryStore()))
    with pytest.raises(SlotPersistenceError, match="NotImplementedError"):
        await manager.hydrate("s1", "alice")


async def test_graph_slots_share_the_desk_database_file_with_desk_sessions(tmp_path: Path) -> None:
    db = tmp_path / ".deskwork" / "deskwork.db"
    desk_sessions = SQLiteSessionStore(db)
    desk_sessions.create_session("worker-session", "Analyst", {})
    manager = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(SQLiteMemoryStore(db)))
    manager.set_shared_tiered("topic", "billing", SlotTier.SESSION)
    await manager.flush("s1")
    assert desk_sessions.get_session("worker-session") is not None
    reread = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(SQLiteMemoryStore(db)))
    await reread.hydrate("s1")
    assert reread.shared_values() == {"topic": "billing"}


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from deskwork.graph.config.schema import ContextConfig
    from deskwork.graph.context.manager import SlotManager
    from deskwork.graph.context.persistence import StoreSlotPersistence
    from deskwork.graph.context.slots import SlotTier
    from deskwork.memory import SQLiteMemoryStore

    async def main() -> None:
        store = StoreSlotPersistence(SQLiteMemoryStore(sys.argv[1]))
        manager = SlotManager(ContextConfig(), persistence=store)
        manager.set_shared("scratch", "turn only")
        manager.set_shared_tiered("ticket", {"id": 42, "state": "open"}, SlotTier.SESSION, 2)
        manager.set_shared_tiered("name", "Alice", SlotTier.LONG_TERM)
        await manager.flush(session_id="s1", user_id="alice")

    asyncio.run(main())
    """
)


async def test_a_second_process_reads_what_the_first_flushed(tmp_path: Path) -> None:
    db = tmp_path / "deskwork.db"
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(db)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    manager = SlotManager(ContextConfig(), persistence=StoreSlotPersistence(SQLiteMemoryStore(db)))
    await manager.hydrate(session_id="s1", user_id="alice")
    assert manager.to_dict()["shared"] == {
        "name": {"value": "Alice", "tier": "long_term", "priority": 0},
        "ticket": {"value": {"id": 42, "state": "open"}, "tier": "session", "priority": 2},
    }
