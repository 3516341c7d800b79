"""SlotManager: shared and agent slots, tiers, promotion, serialization, lifecycle, persistence."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from deskwork.graph.config.schema import (
    ContextConfig,
    SlotConfig,
    TierConfig,
    TieredSlotConfig,
    TimeoutConfig,
)
from deskwork.graph.context.manager import SlotManager
from deskwork.graph.context.persistence import InMemorySlotPersistence, SlotPersistence
from deskwork.graph.context.slots import Slot, SlotTier
from deskwork.graph.core.exceptions import ContextError, SlotPersistenceError
from deskwork.graph.core.token_counting import CharDivisionTokenCounter

ONE_CHAR = CharDivisionTokenCounter(chars_per_token=1)


def config(
    max_tokens: int = 4096, *, long_term: int = 4096, strategy: str = "lru"
) -> ContextConfig:
    return ContextConfig(
        shared_slots=SlotConfig(max_tokens=max_tokens),
        tiered_slots=TieredSlotConfig(long_term=TierConfig(max_tokens=long_term)),
        eviction_strategy=strategy,  # type: ignore[arg-type]
    )


def manager(persistence: SlotPersistence | None = None, **kwargs: Any) -> SlotManager:
    return SlotManager(config(**kwargs), persistence=persistence, token_counter=ONE_CHAR)


def tiers(m: SlotManager) -> dict[str, str]:
    return {key: entry["tier"] for key, entry in m.to_dict()["shared"].items()}


class FlakyPersistence(InMemorySlotPersistence):
    """In-memory persistence whose named operations fail (or hang) on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.fail: set[str] = set()
        self.hang: set[str] = set()

    async def _maybe_fail(self, operation: str) -> None:
        if operation in self.hang:
            await asyncio.sleep(10)
        if operation in self.fail:
            raise ConnectionError(f"{operation}: database unreachable")

    async def load_session_slots(self, session_id: str) -> list[Slot]:
        await self._maybe_fail("load_session_slots")
        return await super().load_session_slots(session_id)

    async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None:
        await self._maybe_fail("save_session_slots")
        await super().save_session_slots(session_id, slots)

    async def load_long_term_slots(self, user_id: str) -> list[Slot]:
        await self._maybe_fail("load_long_term_slots")
        return await super().load_long_term_slots(user_id)

    async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None:
        await self._maybe_fail("save_long_term_slots")
        await super().save_long_term_slots(user_id, slots)


# -- slots and tiers ---------------------------------------------------------------------


def test_the_guide_example() -> None:
    m = SlotManager(config=ContextConfig())
    m.set_shared("user_name", "Alice")
    m.set_shared_tiered("preference", "dark_mode", tier=SlotTier.SESSION)
    m.set_agent("researcher", "search_query", "quantum computing")
    assert m.promote_slot("user_name", SlotTier.LONG_TERM) is True
    data = m.to_dict()
    assert data == {
        "shared": {
            "user_name": {"value": "Alice", "tier": "long_term", "priority": 0},
            "preference": {"value": "dark_mode", "tier": "session", "priority": 0},
        },
        "agents": {
            "researcher": {
                "search_query": {"value": "quantum computing", "tier": "turn", "priority": 0}
            }
        },
    }
    restored = SlotManager(config=ContextConfig())
    restored.from_dict(data)
    assert restored.to_dict() == data


def test_shared_slots_default_to_turn_and_keep_their_tier_when_rewritten() -> None:
    m = manager()
    m.set_shared("a", 1)
    m.set_shared_tiered("b", 2, SlotTier.SESSION)
    m.set_shared("b", 3)
    assert tiers(m) == {"a": "turn", "b": "session"}
    assert m.get_shared("b") == 3 and m.get_shared("missing") is None
    m.set_shared_tiered("b", 4, SlotTier.TURN)  # an explicit tier wins
    assert tiers(m)["b"] == "turn"


def test_agent_slots_are_private_to_each_agent() -> None:
    m = manager()
    m.set_shared("k", "shared")
    m.set_agent("alpha", "k", "alpha's")
    m.set_agent("beta", "k", "beta's")
    assert m.get_shared("k") == "shared"
    assert (m.get_agent("alpha", "k"), m.get_agent("beta", "k")) == ("alpha's", "beta's")
    assert m.get_agent("gamma", "k") is None
    assert m.agent_names == ["alpha", "beta"]


def test_each_agent_pool_has_its_own_budget() -> None:
    m = manager(max_tokens=8)
    m.set_agent("alpha", "a1", "xxxx")
    m.set_agent("alpha", "a2", "xxxx")
    m.set_agent("beta", "b1", "xxxx")
    m.set_agent("alpha", "a3", "xxxx")  # alpha is over budget, beta is not touched
    assert m.get_agent("alpha", "a1") is None
    assert m.get_agent("beta", "b1") == "xxxx"


def test_the_shared_pool_evicts_on_every_write() -> None:
    m = manager(max_tokens=8)
    m.set_shared("a", "xxxx")
    m.set_shared("b", "xxxx")
    m.get_shared("a")
    m.set_shared_tiered("c", "xxxx", SlotTier.SESSION)
    assert sorted(m.shared_values()) == ["a", "c"]
    with pytest.raises(ValueError, match="budget"):
        m.set_shared("huge", "x" * 9)


def test_promotion_only_moves_up() -> None:
    m = manager()
    m.set_shared_tiered("s", 1, SlotTier.SESSION)
    assert m.promote_slot("s", SlotTier.TURN) is False
    assert m.promote_slot("s", SlotTier.SESSION) is False
    assert m.promote_slot("missing", SlotTier.LONG_TERM) is False
    assert m.promote_slot("s", SlotTier.LONG_TERM) is True
    assert tiers(m) == {"s": "long_term"}


def test_promotion_respects_the_target_tier_budget() -> None:
    m = manager(long_term=4)
    m.set_shared("big", "xxxxx")
    with pytest.raises(ValueError, match="long_term tier budget"):
        m.promote_slot("big", SlotTier.LONG_TERM)
    assert tiers(m) == {"big": "turn"}
    m.set_shared_tiered("old", "xxx", SlotTier.LONG_TERM)
    m.set_shared("small", "xx")
    assert m.promote_slot("small", SlotTier.LONG_TERM) is True  # "old" is evicted to fit
    assert tiers(m) == {"big": "turn", "small": "long_term"}


def test_slot_keys_and_agent_names_must_be_non_empty_strings() -> None:
    m = manager()
    with pytest.raises(ValueError, match="slot key"):
        m.set_shared("", 1)
    with pytest.raises(ValueError, match="agent_name"):
        m.set_agent("", "k", 1)


# -- serialization -----------------------------------------------------------------------


def test_to_dict_does_not_count_as_access() -> None:
    m = manager(max_tokens=8)
    m.set_shared("a", "xxxx")
    m.set_shared("b", "xxxx")
    m.to_dict()
    m.shared_values()
    m.set_shared("c", "xxxx")  # "a" is still the least recently used
    assert sorted(m.shared_values()) == ["b", "c"]


def test_from_dict_accepts_legacy_bare_values_and_replaces_everything() -> None:
    m = manager()
    m.set_shared("stale", 1)
    m.from_dict(
        {
            "shared": {
                "count": 3,
                "doc": {"value": {"nested": True}, "tier": "session", "priority": 2},
                "plain_dict": {"title": "a dict that is not a slot entry"},
            },
            "agents": {"alpha": {"x": "y"}},
        }
    )
    data = m.to_dict()
    assert data["shared"] == {
        "count": {"value": 3, "tier": "turn", "priority": 0},
        "doc": {"value": {"nested": True}, "tier": "session", "priority": 2},
        "plain_dict": {
            "value": {"title": "a dict that is not a slot entry"},
            "tier": "turn",
            "priority": 0,
        },
    }
    assert data["agents"] == {"alpha": {"x": {"value": "y", "tier": "turn", "priority": 0}}}


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"shared": []},
        {"shared": {"a": {"value": 1, "tier": "forever"}}},
        {"shared": {"a": {"value": 1, "priority": "high"}}},
        {"agents": {"alpha": 5}},
    ],
)
def test_malformed_from_dict_raises_and_leaves_the_manager_unchanged(bad: Any) -> None:
    m = manager()
    m.set_shared_tiered("keep", "me", SlotTier.SESSION)
    before = m.to_dict()
    with pytest.raises(ValueError):
        m.from_dict(bad)
    assert m.to_dict() == before


async def test_clear_turn_slots_drops_turn_everywhere_and_keeps_the_rest() -> None:
    m = manager()
    m.set_shared("t", 1)
    m.set_shared_tiered("s", 2, SlotTier.SESSION)
    m.set_shared_tiered("l", 3, SlotTier.LONG_TERM)
    m.set_agent("alpha", "t", 4)
    await m.clear_turn_slots()
    assert tiers(m) == {"s": "session", "l": "long_term"}
    assert m.get_agent("alpha", "t") is None


# -- lifecycle ---------------------------------------------------------------------------


async def test_closed_manager_refuses_every_operation() -> None:
    async with manager(InMemorySlotPersistence()) as m:
        m.set_shared("k", "v")
        assert not m.is_closed
    assert m.is_closed
    calls = [
        lambda: m.set_shared("k", "v"),
        lambda: m.get_shared("k"),
        lambda: m.set_shared_tiered("k", "v", SlotTier.SESSION),
        lambda: m.promote_slot("k", SlotTier.SESSION),
        lambda: m.set_agent("a", "k", "v"),
        lambda: m.get_agent("a", "k"),
        m.to_dict,
        lambda: m.from_dict({}),
    ]
    for call in calls:
        with pytest.raises(RuntimeError, match="closed"):
            call()
    for coro in (m.hydrate("s1"), m.flush("s1"), m.clear_turn_slots()):
        with pytest.raises(RuntimeError, match="closed"):
            await coro
    await m.close()  # closing twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        async with m:
            pass


def test_repr_names_sizes_strategy_and_state() -> None:
    m = manager(strategy="fifo")
    m.set_shared("a", "xyz")
    m.set_agent("alpha", "b", 1)
    assert repr(m) == (
        "SlotManager(shared=1 slots/3 tokens, agents=['alpha'], eviction=FIFOEviction,"
        " persistence=None, closed=False)"
    )


# -- persistence -------------------------------------------------------------------------


async def test_hydrate_and_flush_round_trip_session_and_long_term_slots() -> None:
    store = InMemorySlotPersistence()
    first = manager(store)
    first.set_shared("turn_only", "gone next time")
    first.set_shared_tiered("topic", "billing", SlotTier.SESSION, priority=3)
    first.set_shared_tiered("name", "Alice", SlotTier.LONG_TERM)
    await first.flush(session_id="s1", user_id="alice")
    await first.clear_turn_slots()

    same_session = manager(store)
    await same_session.hydrate(session_id="s1", user_id="alice")
    assert same_session.to_dict()["shared"] == {
        "name": {"value": "Alice", "tier": "long_term", "priority": 0},
        "topic": {"value": "billing", "tier": "session", "priority": 3},
    }

    next_session = manager(store)
    await next_session.hydrate(session_id="s2", user_id="alice")
    assert next_session.shared_values() == {"name": "Alice"}  # long-term follows the user

    other_user = manager(store)
    await other_user.hydrate(session_id="s3", user_id="bob")
    assert other_user.shared_values() == {}


async def test_flush_replaces_the_stored_set() -> None:
    store = InMemorySlotPersistence()
    m = manager(store)
    m.set_shared_tiered("a", 1, SlotTier.SESSION)
    m.set_shared_tiered("b", 2, SlotTier.SESSION)
    await m.flush("s1")
    m.remove_shared("a")
    await m.flush("s1")
    assert [s.key for s in await store.load_session_slots("s1")] == ["b"]


async def test_hydrate_keeps_values_already_in_memory() -> None:
    store = InMemorySlotPersistence()
    writer = manager(store)
    writer.set_shared_tiered("topic", "persisted", SlotTier.SESSION)
    writer.set_shared_tiered("topic2", "persisted", SlotTier.SESSION)
    await writer.flush("s1")
    reader = manager(store)
    reader.set_shared("topic", "fresh")
    await reader.hydrate("s1")
    assert reader.shared_values() == {"topic": "fresh", "topic2": "persisted"}


async def test_flush_without_user_id_saves_no_long_term_slots() -> None:
    store = InMemorySlotPersistence()
    m = manager(store)
    m.set_shared_tiered("name", "Alice", SlotTier.LONG_TERM)
    with capture_logs() as logs:
        await m.flush("s1")
    assert [(e["event"], e["count"]) for e in logs] == [("long_term_slots_not_saved", 1)]
    assert await store.health_check() == {"status": "ok", "session_slots": 0, "long_term_slots": 0}


async def test_without_persistence_hydrate_and_flush_do_nothing() -> None:
    m = manager()
    m.set_shared_tiered("s", 1, SlotTier.SESSION)
    await m.flush("s1", "alice")
    await m.hydrate("s1", "alice")
    assert m.shared_values() == {"s": 1}


async def test_hydrated_slots_are_recounted_and_budgeted() -> None:
    store = InMemorySlotPersistence()
    await store.save_session_slots(
        "s1", [Slot(f"k{i}", "xxxx", 0, SlotTier.SESSION, float(i), float(i), 0) for i in range(5)]
    )
    m = manager(store, max_tokens=8)
    await m.hydrate("s1")
    assert sorted(m.shared_values()) == ["k3", "k4"]  # least recently accessed went
    assert m.shared_pool.total_tokens == 8


@pytest.mark.parametrize("failing", ["load_session_slots", "load_long_term_slots"])
async def test_a_failing_load_raises_and_loads_nothing(failing: str) -> None:
    store = FlakyPersistence()
    seed = manager(store)
    seed.set_shared_tiered("s", "session value", SlotTier.SESSION)
    seed.set_shared_tiered("l", "long value", SlotTier.LONG_TERM)
    await seed.flush("s1", "alice")

    m = manager(store)
    m.set_shared("mine", 1)
    before = m.to_dict()
    store.fail.add(failing)
    with pytest.raises(SlotPersistenceError, match=f"{failing} failed: ConnectionError") as info:
        await m.hydrate("s1", "alice")
    assert isinstance(info.value, ContextError)
    assert isinstance(info.value.__cause__, ConnectionError)
    assert m.to_dict() == before


async def test_a_failing_save_raises_and_keeps_memory_state() -> None:
    store = FlakyPersistence()
    m = manager(store)
    m.set_shared_tiered("s", 1, SlotTier.SESSION)
    before = m.to_dict()
    store.fail.add("save_session_slots")
    with pytest.raises(SlotPersistenceError, match="save_session_slots"):
        await m.flush("s1", "alice")
    assert m.to_dict() == before
    assert await store.load_session_slots("s1") == []


async def test_a_failing_long_term_save_restores_the_previous_session_set() -> None:
    store = FlakyPersistence()
    m = manager(store)
    m.set_shared_tiered("topic", "v1", SlotTier.SESSION)
    await m.flush("s1", "alice")
    m.set_shared_tiered("topic", "v2", SlotTier.SESSION)
    m.set_shared_tiered("name", "Alice", SlotTier.LONG_TERM)
    store.fail.add("save_long_term_slots")
    with pytest.raises(SlotPersistenceError, match="save_long_term_slots"):
        await m.flush("s1", "alice")
    assert [(s.key, s.value) for s in await store.load_session_slots("s1")] == [("topic", "v1")]
    assert m.get_shared("topic") == "v2"


async def test_a_slow_backend_times_out_as_slot_persistence_error() -> None:
    store = FlakyPersistence()
    store.hang.add("load_session_slots")
    m = SlotManager(
        config(), persistence=store, timeout_config=TimeoutConfig(persistence_seconds=0.05)
    )
    with pytest.raises(SlotPersistenceError, match=r"timed out after 0\.05s"):
        await m.hydrate("s1")
    assert m.shared_values() == {}


async def test_a_backend_returning_garbage_is_a_slot_persistence_error() -> None:
    class Garbage(InMemorySlotPersistence):
        async def load_session_slots(self, session_id: str) -> list[Slot]:
            return [{"key": "not a slot"}]  # type: ignore[list-item]

    m = manager(Garbage())
    with pytest.raises(SlotPersistenceError, match="list\\[Slot\\]"):
        await m.hydrate("s1")


async def test_hydrate_and_flush_validate_the_session_id() -> None:
    m = manager(InMemorySlotPersistence())
    with pytest.raises(ValueError, match="session_id"):
        await m.hydrate("")
    with pytest.raises(ValueError, match="session_id"):
        await m.flush("")


async def test_concurrent_writers_and_flushes_end_with_the_latest_state_stored() -> None:
    store = InMemorySlotPersistence()
    m = manager(store)

    async def writer(n: int) -> None:
        for i in range(20):
            m.set_shared_tiered(f"w{n}-{i}", i, SlotTier.SESSION)
            await m.flush("s1", "alice")
            await asyncio.sleep(0)

    await asyncio.gather(*(writer(n) for n in range(5)))
    await m.flush("s1", "alice")
    stored = {s.key: s.value for s in await store.load_session_slots("s1")}
    assert stored == m.shared_values()
    assert len(stored) == 100


async def test_one_manager_never_carries_slots_into_another_session_or_user() -> None:
    store = InMemorySlotPersistence()
    m = manager(store)
    await m.hydrate("s1", "alice")
    m.set_shared_tiered("topic", "alice's billing issue", SlotTier.SESSION)
    m.set_shared_tiered("name", "Alice", SlotTier.LONG_TERM)
    await m.flush("s1", "alice")

    await m.hydrate("s2", "alice")  # same user, new session: only long-term context stays
    assert m.shared_values() == {"name": "Alice"}

    await m.hydrate("s3", "bob")  # another user: nothing of alice's stays
    assert m.shared_values() == {}
    await m.flush("s3", "bob")
    assert await store.load_session_slots("s3") == []
    assert await store.load_long_term_slots("bob") == []


async def test_flushing_into_another_session_than_hydrated_is_refused() -> None:
    store = InMemorySlotPersistence()
    m = manager(store)
    await m.hydrate("s1", "alice")
    m.set_shared_tiered("topic", "private", SlotTier.SESSION)
    with pytest.raises(ValueError, match="holds session 's1'"):
        await m.flush("s2", "alice")
    with pytest.raises(ValueError, match="another user's"):
        await m.flush("s1", "bob")
    assert await store.load_session_slots("s2") == []
    await m.flush("s1", "alice")
    assert [s.key for s in await store.load_session_slots("s1")] == ["topic"]


async def test_a_failed_rehydrate_keeps_the_previous_session_slots() -> None:
    store = FlakyPersistence()
    m = manager(store)
    await m.hydrate("s1")
    m.set_shared_tiered("topic", "kept", SlotTier.SESSION)
    store.fail.add("load_session_slots")
    with pytest.raises(SlotPersistenceError):
        await m.hydrate("s2")
    assert m.shared_values() == {"topic": "kept"}
    await m.flush("s1")  # still bound to s1


async def test_persistence_errors_do_not_repeat_secrets() -> None:
    class Leaky(InMemorySlotPersistence):
        async def load_session_slots(self, session_id: str) -> list[Slot]:
            raise ConnectionError("auth failed: password=hunter2 api_key=sk-abcdefghijkl")

    with pytest.raises(SlotPersistenceError) as info:
        await manager(Leaky()).hydrate("s1")
    assert "hunter2" not in str(info.value) and "sk-abcdefghijkl" not in str(info.value)
    assert "ConnectionError" in str(info.value)
