"""Eviction strategies, alone and driving a pool: LRU, FIFO, priority, demotion, custom."""

from __future__ import annotations

import time

import pytest
from structlog.testing import capture_logs

from deskwork.graph.config.schema import ContextConfig, SlotConfig
from deskwork.graph.context.eviction import (
    DemotionEviction,
    EvictionStrategy,
    FIFOEviction,
    LRUEviction,
    PriorityEviction,
    eviction_strategy_for,
)
from deskwork.graph.context.manager import SlotManager
from deskwork.graph.context.slots import Slot, SlotPool, SlotTier
from deskwork.graph.core.token_counting import CharDivisionTokenCounter

ONE_CHAR = CharDivisionTokenCounter(chars_per_token=1)


def pool(strategy: EvictionStrategy, max_tokens: int = 100, **tiers: int) -> SlotPool:
    budgets = {SlotTier(name): budget for name, budget in tiers.items()}
    return SlotPool(max_tokens, strategy, ONE_CHAR, tier_max_tokens=budgets)


def slot(
    key: str, *, priority: int = 0, tier: SlotTier = SlotTier.TURN, c: float, a: float
) -> Slot:
    return Slot(key, "v", priority, tier, c, a, 1)


SAMPLE = [
    slot("old-created-recently-used", priority=5, c=1.0, a=9.0),
    slot("new-created-long-unused", priority=1, c=5.0, a=2.0),
    slot("middle", priority=3, tier=SlotTier.SESSION, c=3.0, a=5.0),
]


def keys(slots: list[Slot]) -> list[str]:
    return [s.key for s in slots]


def test_lru_selects_least_recently_accessed() -> None:
    assert keys(LRUEviction().select(SAMPLE, 2)) == ["new-created-long-unused", "middle"]


def test_fifo_selects_oldest_created() -> None:
    assert keys(FIFOEviction().select(SAMPLE, 2)) == ["old-created-recently-used", "middle"]


def test_priority_selects_lowest_priority_then_least_recent() -> None:
    assert keys(PriorityEviction().select(SAMPLE, 3)) == [
        "new-created-long-unused",
        "middle",
        "old-created-recently-used",
    ]
    tied = [slot("b", priority=1, c=1, a=8), slot("a", priority=1, c=2, a=3)]
    assert keys(PriorityEviction().select(tied, 1)) == ["a"]


def test_demotion_selects_shortest_lived_tier_first_and_demotes_one_step() -> None:
    mixed = [
        slot("lt", tier=SlotTier.LONG_TERM, c=1, a=1),
        slot("s", tier=SlotTier.SESSION, c=1, a=2),
        slot("t", tier=SlotTier.TURN, c=1, a=3),
    ]
    strategy = DemotionEviction()
    assert keys(strategy.select(mixed, 3)) == ["t", "s", "lt"]
    assert strategy.demote_to(mixed[0]) is SlotTier.SESSION
    assert strategy.demote_to(mixed[1]) is SlotTier.TURN
    assert strategy.demote_to(mixed[2]) is None
    assert LRUEviction().demote_to(mixed[0]) is None  # plain strategies remove


@pytest.mark.parametrize("strategy", [LRUEviction(), FIFOEviction(), PriorityEviction()])
def test_count_bounds_the_selection(strategy: EvictionStrategy) -> None:
    assert strategy.select(SAMPLE, 0) == []
    assert len(strategy.select(SAMPLE, 10)) == 3


def test_lru_pool_keeps_the_slot_that_was_read() -> None:
    p = pool(LRUEviction(), 8)
    p.add("a", "xxxx")
    p.add("b", "xxxx")
    p.get("a")
    p.add("c", "xxxx")
    assert sorted(p) == ["a", "c"]


def test_fifo_pool_drops_the_first_created_even_if_read() -> None:
    p = pool(FIFOEviction(), 8)
    p.add("a", "xxxx")
    p.add("b", "xxxx")
    p.get("a")
    p.add("c", "xxxx")
    assert sorted(p) == ["b", "c"]


def test_priority_pool_drops_the_lowest_priority() -> None:
    p = pool(PriorityEviction(), 8)
    p.add("important", "xxxx", priority=9)
    p.add("minor", "xxxx", priority=1)
    p.add("new", "xxxx", priority=5)
    assert sorted(p) == ["important", "new"]


def test_a_new_low_priority_slot_is_kept_and_the_next_lowest_goes() -> None:
    p = pool(PriorityEviction(), 8)
    p.add("a", "xxxx", priority=5)
    p.add("b", "xxxx", priority=6)
    p.add("new", "xxxx", priority=0)  # the strategy's first pick is the slot just written
    assert sorted(p) == ["b", "new"]


def test_demotion_under_a_pool_budget_removes_turn_slots_before_touching_session() -> None:
    p = pool(DemotionEviction(), 8)
    p.add("s", "xxxx", tier=SlotTier.SESSION)
    p.add("t", "xxxx")
    p.add("new", "xxxx", tier=SlotTier.SESSION)
    assert sorted(p) == ["new", "s"]
    p.add("newer", "xxxx", tier=SlotTier.SESSION)  # no TURN left: "s" is demoted, then removed
    assert sorted(p) == ["new", "newer"]


def test_demotion_under_a_tier_budget_moves_slots_down_instead_of_removing() -> None:
    p = pool(DemotionEviction(), 100, long_term=4, session=4)
    p.add("lt1", "xxxx", tier=SlotTier.LONG_TERM)
    p.add("lt2", "xxxx", tier=SlotTier.LONG_TERM)  # lt1: LONG_TERM -> SESSION
    assert [(s.key, s.tier) for s in p.slots()] == [
        ("lt1", SlotTier.SESSION),
        ("lt2", SlotTier.LONG_TERM),
    ]
    p.add("lt3", "xxxx", tier=SlotTier.LONG_TERM)  # lt2 -> SESSION, so lt1 -> TURN
    assert {s.key: s.tier for s in p.slots()} == {
        "lt1": SlotTier.TURN,
        "lt2": SlotTier.SESSION,
        "lt3": SlotTier.LONG_TERM,
    }
    assert p.tier_tokens(SlotTier.TURN) == 4 and p.total_tokens == 12


def test_a_demoted_slot_competes_by_recency_within_its_new_tier() -> None:
    p = pool(DemotionEviction(), 100, turn=4, session=4)
    p.add("s1", "xxxx", tier=SlotTier.SESSION)
    p.add("t1", "xxxx")
    p.add("s2", "xxxx", tier=SlotTier.SESSION)  # s1 -> TURN; TURN over: s1 is least recent
    assert {s.key: s.tier for s in p.slots()} == {"t1": SlotTier.TURN, "s2": SlotTier.SESSION}

    p = pool(DemotionEviction(), 100, turn=4, session=4)
    p.add("s1", "xxxx", tier=SlotTier.SESSION)
    p.add("t1", "xxxx")
    p.get("s1")  # now t1 is the least recent
    p.add("s2", "xxxx", tier=SlotTier.SESSION)
    assert {s.key: s.tier for s in p.slots()} == {"s1": SlotTier.TURN, "s2": SlotTier.SESSION}


class CustomEviction(EvictionStrategy):
    """The documented sample: evict the lowest priority."""

    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        return sorted(slots, key=lambda s: s.priority)[:count]


def test_custom_strategy_from_the_guide_drives_a_slot_manager() -> None:
    config = ContextConfig(shared_slots=SlotConfig(max_tokens=8))
    manager = SlotManager(config, token_counter=ONE_CHAR, eviction_strategy=CustomEviction())
    manager.set_shared("keep", "xxxx", priority=10)
    manager.set_shared("drop", "xxxx", priority=0)
    manager.set_shared("new", "xxxx", priority=5)
    assert manager.get_shared("drop") is None
    assert manager.get_shared("keep") == "xxxx" and manager.get_shared("new") == "xxxx"


def test_a_strategy_that_chooses_nothing_leaves_the_pool_over_budget_with_a_warning() -> None:
    class Stubborn(EvictionStrategy):
        def select(self, slots: list[Slot], count: int) -> list[Slot]:
            return []

    p = pool(Stubborn(), 4)
    p.add("a", "xxx")
    with capture_logs() as logs:
        p.add("b", "xxx")
    assert sorted(p) == ["a", "b"]
    assert [(e["event"], e["log_level"], e["eviction_strategy"]) for e in logs] == [
        ("slot_pool_over_budget", "warning", "Stubborn")
    ]


def test_strategies_are_named_by_config() -> None:
    assert isinstance(eviction_strategy_for("lru"), LRUEviction)
    assert isinstance(eviction_strategy_for("fifo"), FIFOEviction)
    assert isinstance(eviction_strategy_for("priority"), PriorityEviction)
    assert isinstance(eviction_strategy_for("demotion"), DemotionEviction)
    with pytest.raises(ValueError, match="unknown eviction strategy"):
        eviction_strategy_for("random")
    manager = SlotManager(ContextConfig(eviction_strategy="demotion"))
    assert isinstance(manager.eviction_strategy, DemotionEviction)
    assert isinstance(manager.shared_pool.eviction_strategy, DemotionEviction)


@pytest.mark.parametrize("name", ["lru", "fifo", "priority", "demotion"])
def test_thousands_of_writes_with_eviction_take_milliseconds(name: str) -> None:
    config = ContextConfig(shared_slots=SlotConfig(max_tokens=1000), eviction_strategy=name)  # type: ignore[arg-type]
    manager = SlotManager(config, token_counter=ONE_CHAR)
    start = time.process_time()  # CPU time: a loaded machine's other processes do not count
    for i in range(2000):
        manager.set_shared_tiered(f"key-{i}", f"value-{i:04d}", SlotTier.SESSION, priority=i % 7)
    elapsed = time.process_time() - start
    assert manager.shared_pool.total_tokens <= 1000
    assert len(manager.shared_pool) == 100  # 10 characters each
    assert elapsed < 1.0, f"{name}: 2,000 writes with eviction took {elapsed:.3f}s"
