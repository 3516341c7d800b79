"""Property tests: whatever the writes, a pool's accounting and budgets hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deskwork.graph.context.eviction import (
    DemotionEviction,
    EvictionStrategy,
    FIFOEviction,
    LRUEviction,
    PriorityEviction,
)
from deskwork.graph.context.slots import TIER_ORDER, SlotPool, SlotTier
from deskwork.graph.core.token_counting import CharDivisionTokenCounter

ONE_CHAR = CharDivisionTokenCounter(chars_per_token=1)

operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "get", "remove", "set_tier"]),
        st.sampled_from([f"k{i}" for i in range(8)]),
        st.text(alphabet="xyz", min_size=0, max_size=12),
        st.integers(min_value=0, max_value=3),
        st.sampled_from(TIER_ORDER),
    ),
    max_size=60,
)
strategies = st.sampled_from(
    [LRUEviction(), FIFOEviction(), PriorityEviction(), DemotionEviction()]
)


def _check_invariants(pool: SlotPool) -> None:
    slots = pool.slots()
    assert pool.total_tokens == sum(s.tokens for s in slots)
    for tier in TIER_ORDER:
        assert pool.tier_tokens(tier) == sum(s.tokens for s in slots if s.tier is tier)
        assert pool.tier_tokens(tier) <= pool.tier_max_tokens[tier]
    assert pool.total_tokens <= pool.max_tokens
    assert len(pool) == len({s.key for s in slots})


@settings(max_examples=150, deadline=None)
@given(operations, strategies, st.integers(min_value=12, max_value=30))
def test_accounting_and_budgets_hold_after_any_sequence_of_writes(
    ops: list[tuple[str, str, str, int, SlotTier]], strategy: EvictionStrategy, budget: int
) -> None:
    tier_budgets = {SlotTier.TURN: 12, SlotTier.SESSION: 14, SlotTier.LONG_TERM: 12}
    pool = SlotPool(budget, strategy, ONE_CHAR, tier_max_tokens=tier_budgets)
    for op, key, value, priority, tier in ops:
        if op == "add":
            pool.add(key, value, priority, tier=tier)
            assert pool.get(key) == value  # the slot just written always stays
        elif op == "get":
            pool.get(key)
        elif op == "remove":
            pool.remove(key)
        else:
            pool.set_tier(key, tier)
        _check_invariants(pool)
