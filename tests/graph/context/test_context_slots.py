"""SlotTier, Slot and SlotPool: budgets, tiers, accounting, eviction triggers."""

from __future__ import annotations

import pytest

from deskwork.graph.context.eviction import LRUEviction
from deskwork.graph.context.slots import TIER_ORDER, Slot, SlotPool, SlotTier
from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter

ONE_CHAR = CharDivisionTokenCounter(chars_per_token=1)  # tokens == characters


def pool(max_tokens: int = 100, **tiers: int) -> SlotPool:
    budgets = {SlotTier(name): budget for name, budget in tiers.items()}
    return SlotPool(max_tokens, token_counter=ONE_CHAR, tier_max_tokens=budgets)


def test_slot_tier_is_a_string_enum_ordered_short_to_long() -> None:
    turn: str = SlotTier.TURN
    assert turn == "turn" and isinstance(SlotTier.SESSION, str)
    assert SlotTier("long_term") is SlotTier.LONG_TERM
    assert TIER_ORDER == (SlotTier.TURN, SlotTier.SESSION, SlotTier.LONG_TERM)


def test_slot_uses_slots_and_has_the_documented_fields() -> None:
    slot = Slot("k", "v", 1, SlotTier.SESSION, 1.0, 2.0, 3)
    assert not hasattr(slot, "__dict__")
    assert (slot.key, slot.value, slot.priority, slot.tier) == ("k", "v", 1, SlotTier.SESSION)
    assert (slot.created_at, slot.accessed_at, slot.tokens) == (1.0, 2.0, 3)


def test_add_get_remove_and_token_accounting() -> None:
    p = pool()
    p.add("a", "xxxx")
    p.add("b", "yy", tier=SlotTier.SESSION)
    assert len(p) == 2 and "a" in p and "zzz" not in p
    assert p.get("a") == "xxxx" and p.get("missing") is None
    assert p.total_tokens == 6
    assert p.tier_tokens(SlotTier.TURN) == 4 and p.tier_tokens(SlotTier.SESSION) == 2
    assert p.remove("a") is True and p.remove("a") is False
    assert p.total_tokens == 2 and p.tier_tokens(SlotTier.TURN) == 0


def test_replacing_a_slot_keeps_created_at_and_recounts_tokens() -> None:
    p = pool()
    p.add("a", "xxxx")
    before = p.peek("a")
    assert before is not None
    p.add("a", "xx", priority=5, tier=SlotTier.SESSION)
    after = p.peek("a")
    assert after is not None
    assert after.created_at == before.created_at
    assert after.accessed_at > before.accessed_at
    assert (after.tokens, after.priority, after.tier) == (2, 5, SlotTier.SESSION)
    assert p.total_tokens == 2 and p.tier_tokens(SlotTier.TURN) == 0


def test_get_counts_as_access_but_slots_and_peek_do_not() -> None:
    p = pool()
    p.add("a", "x")
    first = p.peek("a")
    assert first is not None
    p.slots()
    p.peek("a")
    assert p.peek("a") == first
    p.get("a")
    touched = p.peek("a")
    assert touched is not None and touched.accessed_at > first.accessed_at
    slot = p.get_slot("a")
    assert slot is not None and slot.accessed_at > touched.accessed_at


def test_returned_slots_are_copies_so_accounting_cannot_be_bypassed() -> None:
    p = pool()
    p.add("a", "xx")
    copy = p.get_slot("a")
    assert copy is not None
    copy.tokens = 999
    copy.value = "changed"
    assert p.get("a") == "xx" and p.total_tokens == 2


def test_non_string_values_are_measured_as_json() -> None:
    p = pool()
    p.add("d", {"a": 1})  # '{"a": 1}' is 8 characters
    assert p.total_tokens == 8


def test_the_injected_token_counter_is_used() -> None:
    class Words(TokenCounter):
        def count(self, text: str) -> int:
            return len(text.split())

    p = SlotPool(10, token_counter=Words())
    p.add("a", "one two three")
    assert p.total_tokens == 3
    assert isinstance(SlotPool().token_counter, CharDivisionTokenCounter)
    assert isinstance(SlotPool().eviction_strategy, LRUEviction)


def test_going_over_budget_evicts_but_never_the_slot_just_written() -> None:
    p = pool(10)
    p.add("a", "xxxx")
    p.add("b", "xxxx")
    p.add("c", "xxxx")  # 12 > 10: the least recently used other slot goes
    assert list(p) == ["b", "c"]
    assert p.total_tokens == 8


def test_a_value_larger_than_the_budget_is_rejected_and_nothing_changes() -> None:
    p = pool(5)
    p.add("a", "xxx")
    with pytest.raises(ValueError, match="budget"):
        p.add("big", "x" * 6)
    with pytest.raises(ValueError, match="budget"):
        p.add("a", "x" * 6)  # replacing too
    assert p.get("a") == "xxx" and "big" not in p and p.total_tokens == 3


def test_tier_budgets_evict_only_within_the_tier() -> None:
    p = pool(100, session=6)
    p.add("t1", "xxxx")
    p.add("s1", "xxxx", tier=SlotTier.SESSION)
    p.add("s2", "xxxx", tier=SlotTier.SESSION)  # session tier 8 > 6: s1 goes, t1 stays
    assert list(p) == ["t1", "s2"]
    with pytest.raises(ValueError, match="session tier budget"):
        p.add("s3", "x" * 7, tier=SlotTier.SESSION)


def test_remove_tier_and_clear() -> None:
    p = pool()
    p.add("t", "x")
    p.add("s", "xx", tier=SlotTier.SESSION)
    assert p.remove_tier(SlotTier.TURN) == 1
    assert list(p) == ["s"] and p.tier_tokens(SlotTier.TURN) == 0
    p.clear()
    assert len(p) == 0 and p.total_tokens == 0 and p.tier_tokens(SlotTier.SESSION) == 0


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_budgets_must_be_positive_integers(bad: object) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        SlotPool(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive integer"):
        SlotPool(10, tier_max_tokens={SlotTier.TURN: bad})  # type: ignore[dict-item]


def test_repr_shows_size_budget_and_strategy() -> None:
    p = pool(50)
    p.add("a", "xyz")
    assert repr(p) == "SlotPool(slots=1, tokens=3/50, eviction=LRUEviction)"
