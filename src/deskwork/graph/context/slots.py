"""Context slots: tiers, the slot record and the token-budgeted pool.

A :class:`SlotPool` holds :class:`Slot` records under a token budget (and, optionally, one
budget per tier). After every :meth:`SlotPool.add` the pool brings itself back under budget
with its :class:`~deskwork.graph.context.eviction.EvictionStrategy`::

    add(key, value) ──► per-tier budgets (LONG_TERM, SESSION, TURN) ──► pool budget
                           │ over? strategy.select(candidates, n)
                           └──► remove the victim, or demote it one tier (DemotionEviction)

The slot just written is never its own victim; a value larger than a budget it must fit is
rejected with ``ValueError`` before anything changes.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from deskwork.graph.core.logging_context import get_graph_logger
from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter
from deskwork.utils import is_integer

if TYPE_CHECKING:
    from deskwork.graph.context.eviction import EvictionStrategy

__all__ = ["TIER_ORDER", "Slot", "SlotPool", "SlotTier"]

logger = get_graph_logger("deskwork.graph.context")


class SlotTier(StrEnum):
    """How long a slot lives (a ``str``: ``SlotTier.TURN == "turn"``)."""

    TURN = "turn"
    """Discarded at the end of the turn."""
    SESSION = "session"
    """Persisted for the session."""
    LONG_TERM = "long_term"
    """Persisted across sessions, keyed by user."""


TIER_ORDER: tuple[SlotTier, ...] = (SlotTier.TURN, SlotTier.SESSION, SlotTier.LONG_TERM)
"""Tiers from shortest- to longest-lived."""

TIER_RANK: dict[SlotTier, int] = {tier: rank for rank, tier in enumerate(TIER_ORDER)}
"""Position of each tier in :data:`TIER_ORDER` (``TURN`` is 0)."""

_last_tick = 0.0


def now() -> float:
    """Wall-clock seconds, strictly increasing within this process.

    Slot timestamps order LRU and FIFO eviction; two writes in the same clock tick would
    otherwise tie.
    """
    global _last_tick
    tick = max(time.time(), math.nextafter(_last_tick, math.inf))
    _last_tick = tick
    return tick


@dataclass(slots=True)
class Slot:
    """One context value with its bookkeeping."""

    key: str
    """The slot name."""
    value: Any
    """The stored value (anything; JSON-compatible values persist)."""
    priority: int = 0
    """Higher survives longer under :class:`PriorityEviction`."""
    tier: SlotTier = SlotTier.TURN
    """How long the slot lives."""
    created_at: float = dataclasses.field(default_factory=now)
    """When the slot was first written (epoch seconds)."""
    accessed_at: float = dataclasses.field(default_factory=now)
    """When the slot was last written or read (epoch seconds)."""
    tokens: int = 0
    """The value's size as counted by the pool's token counter."""


def check_priority(priority: Any, where: str) -> int:
    """``priority`` when it is an int (not a bool): eviction compares priorities with each other.

    Raises:
        ValueError: naming ``where`` the priority came from.
    """
    if not is_integer(priority):
        raise ValueError(f"{where} priority must be an int, got {priority!r}")
    return priority


def value_text(value: Any) -> str:
    """The text whose tokens a value costs: strings as they are, other values as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # circular structures and the like
        return repr(value)


class SlotPool:
    """Token-budgeted collection of slots. Supports ``len()`` and ``in``."""

    def __init__(
        self,
        max_tokens: int = 4096,
        eviction_strategy: EvictionStrategy | None = None,
        token_counter: TokenCounter | None = None,
        *,
        tier_max_tokens: Mapping[SlotTier, int] | None = None,
    ) -> None:
        """Args:
        max_tokens: budget of the whole pool (> 0).
        eviction_strategy: how victims are chosen (default ``LRUEviction``).
        token_counter: how values are measured (default ``CharDivisionTokenCounter()``).
        tier_max_tokens: optional budget per tier (each > 0).

        Raises:
            ValueError: a budget is not a positive integer.
        """
        from deskwork.graph.context.eviction import LRUEviction  # eviction imports this module

        _check_budget("max_tokens", max_tokens)
        budgets = dict(tier_max_tokens or {})
        for tier, budget in budgets.items():
            _check_budget(f"tier_max_tokens[{SlotTier(tier)!s}]", budget)
        self.max_tokens = max_tokens
        self.tier_max_tokens: dict[SlotTier, int] = {SlotTier(t): b for t, b in budgets.items()}
        self.eviction_strategy: EvictionStrategy = eviction_strategy or LRUEviction()
        self.token_counter: TokenCounter = token_counter or CharDivisionTokenCounter()
        self._slots: dict[str, Slot] = {}
        self._tiers: dict[SlotTier, dict[str, Slot]] = {tier: {} for tier in TIER_ORDER}
        self._total = 0
        self._tier_tokens: dict[SlotTier, int] = dict.fromkeys(TIER_ORDER, 0)

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._slots))

    def __repr__(self) -> str:
        return (
            f"SlotPool(slots={len(self._slots)}, tokens={self._total}/{self.max_tokens},"
            f" eviction={type(self.eviction_strategy).__name__})"
        )

    @property
    def total_tokens(self) -> int:
        """Tokens held by all slots."""
        return self._total

    def tier_tokens(self, tier: SlotTier) -> int:
        """Tokens held by the slots of ``tier``."""
        return self._tier_tokens[SlotTier(tier)]

    def get(self, key: str) -> Any | None:
        """The value of ``key`` (``None`` if absent); counts as an access."""
        slot = self._slots.get(key)
        if slot is None:
            return None
        slot.accessed_at = now()
        return slot.value

    def get_slot(self, key: str) -> Slot | None:
        """A copy of the slot under ``key`` (``None`` if absent); counts as an access."""
        slot = self._slots.get(key)
        if slot is None:
            return None
        slot.accessed_at = now()
        return dataclasses.replace(slot)

    def peek(self, key: str) -> Slot | None:
        """A copy of the slot under ``key`` without counting an access."""
        slot = self._slots.get(key)
        return None if slot is None else dataclasses.replace(slot)

    def slots(self) -> list[Slot]:
        """Copies of all slots in insertion order, without touching ``accessed_at``."""
        return [dataclasses.replace(slot) for slot in self._slots.values()]

    # -- writing -------------------------------------------------------------------------

    def add(
        self, key: str, value: Any, priority: int = 0, *, tier: SlotTier = SlotTier.TURN
    ) -> None:
        """Set ``key`` (replacing its value, tier and priority), then evict to fit the budget.

        A replaced slot keeps its ``created_at``.

        Raises:
            ValueError: ``priority`` is not an int, or the value alone exceeds the pool budget
                or its tier's budget.
        """
        check_priority(priority, f"slot {key!r}")
        tier = SlotTier(tier)
        tokens = self.token_counter.count(value_text(value))
        self._check_fits(key, tokens, tier)
        stamp = now()
        old = self._slots.get(key)
        if old is not None:
            self._discount(old)
        slot = Slot(key, value, priority, tier, old.created_at if old else stamp, stamp, tokens)
        self._slots[key] = slot
        self._count(slot)
        self.enforce_budget(protect=key)

    def insert(self, slot: Slot) -> None:
        """Put a ready-made slot in place as is (timestamps kept, tokens recounted).

        No eviction runs; call :meth:`enforce_budget` after a batch.
        """
        old = self._slots.get(slot.key)
        if old is not None:
            self._discount(old)
        slot.tier = SlotTier(slot.tier)
        slot.tokens = self.token_counter.count(value_text(slot.value))
        self._slots[slot.key] = slot
        self._count(slot)

    def remove(self, key: str) -> bool:
        """Delete ``key``; ``False`` if it was not there."""
        slot = self._slots.pop(key, None)
        if slot is None:
            return False
        self._discount(slot)
        return True

    def set_tier(self, key: str, tier: SlotTier, *, enforce: bool = True) -> bool:
        """Move ``key`` to ``tier`` (then evict within budgets); ``False`` if absent.

        Raises:
            ValueError: the slot alone exceeds the budget of ``tier``.
        """
        slot = self._slots.get(key)
        if slot is None:
            return False
        tier = SlotTier(tier)
        self._check_fits(key, slot.tokens, tier)
        self._move(slot, tier)
        if enforce:
            self.enforce_budget(protect=key)
        return True

    def remove_tier(self, tier: SlotTier) -> int:
        """Delete every slot of ``tier``; returns how many went."""
        keys = list(self._tiers[SlotTier(tier)])
        for key in keys:
            self.remove(key)
        return len(keys)

    def clear(self) -> None:
        """Delete every slot."""
        self._slots.clear()
        self._tiers = {tier: {} for tier in TIER_ORDER}
        self._total = 0
        self._tier_tokens = dict.fromkeys(TIER_ORDER, 0)

    # -- budgets -------------------------------------------------------------------------

    def _over_budget(self) -> bool:
        return self._total > self.max_tokens or any(
            self._tier_tokens[tier] > budget for tier, budget in self.tier_max_tokens.items()
        )

    def enforce_budget(self, *, protect: str | None = None) -> None:
        """Evict (or demote) until every tier budget and the pool budget hold.

        ``protect`` names a slot that is never chosen. Stops, with a warning, if the
        strategy offers no usable victim.
        """
        while self._over_budget():  # a demotion can push the next tier over: repeat
            for tier in reversed(TIER_ORDER):
                budget = self.tier_max_tokens.get(tier)
                if budget is not None and not self._reduce(
                    _over(self._tier_tokens, tier, budget), tier, protect
                ):
                    return
            if not self._reduce(lambda: self._total > self.max_tokens, None, protect):
                return

    def _reduce(self, over: Callable[[], bool], tier: SlotTier | None, protect: str | None) -> bool:
        """Evict within ``tier`` (or the whole pool) while ``over()``; ``False`` if stuck."""
        group = self._slots if tier is None else self._tiers[tier]
        count = 1
        while over():
            candidates = list(group.values())
            wanted = min(count, len(candidates))
            select = self.eviction_strategy.select
            progressed = bool(candidates) and self._apply_victims(
                select(candidates, wanted), group, protect, over
            )
            if not progressed and protect in group and wanted < len(candidates):
                # the strategy picked only the protected slot: ask for one more
                progressed = self._apply_victims(
                    select(candidates, wanted + 1), group, protect, over
                )
            if not progressed:
                logger.warning(
                    "slot_pool_over_budget",
                    reason="the eviction strategy chose no usable victim",
                    eviction_strategy=type(self.eviction_strategy).__name__,
                )
                return False
            count *= 2
        return True

    def _apply_victims(
        self,
        victims: list[Slot],
        group: dict[str, Slot],
        protect: str | None,
        over: Callable[[], bool],
    ) -> bool:
        progressed = False
        for victim in victims:
            if not over():
                break
            slot = group.get(victim.key)
            if slot is None or slot.key == protect:
                continue
            target = self.eviction_strategy.demote_to(slot)
            if target is None:
                self.remove(slot.key)
                progressed = True
            elif TIER_RANK[target] < TIER_RANK[slot.tier]:
                self._move(slot, target)
                progressed = True
        return progressed

    def _check_fits(self, key: str, tokens: int, tier: SlotTier) -> None:
        if tokens > self.max_tokens:
            raise ValueError(
                f"slot {key!r} needs {tokens} tokens; the pool budget is {self.max_tokens}"
            )
        budget = self.tier_max_tokens.get(tier)
        if budget is not None and tokens > budget:
            raise ValueError(
                f"slot {key!r} needs {tokens} tokens; the {tier} tier budget is {budget}"
            )

    def _move(self, slot: Slot, tier: SlotTier) -> None:
        self._discount(slot)
        slot.tier = tier
        self._count(slot)

    def _count(self, slot: Slot) -> None:
        self._total += slot.tokens
        self._tier_tokens[slot.tier] += slot.tokens
        self._tiers[slot.tier][slot.key] = slot

    def _discount(self, slot: Slot) -> None:
        self._total -= slot.tokens
        self._tier_tokens[slot.tier] -= slot.tokens
        del self._tiers[slot.tier][slot.key]


def _over(tokens: dict[SlotTier, int], tier: SlotTier, budget: int) -> Callable[[], bool]:
    return lambda: tokens[tier] > budget


def _check_budget(name: str, value: int) -> None:
    if not is_integer(value) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
