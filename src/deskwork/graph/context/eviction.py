"""Eviction strategies: which slots leave a pool that is over its token budget.

A strategy returns victims in the order it prefers to lose them; the pool takes them one by
one until it fits. :meth:`EvictionStrategy.demote_to` lets a strategy move a victim to a
shorter-lived tier instead of removing it (:class:`DemotionEviction` does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from deskwork.graph.context.slots import TIER_ORDER, TIER_RANK, Slot, SlotTier

__all__ = [
    "DemotionEviction",
    "EvictionStrategy",
    "FIFOEviction",
    "LRUEviction",
    "PriorityEviction",
    "eviction_strategy_for",
]


def smallest(slots: list[Slot], count: int, key: Callable[[Slot], Any]) -> list[Slot]:
    """The ``count`` slots with the smallest ``key``, smallest first (stable among equals)."""
    if count <= 0 or not slots:
        return []
    if count == 1:
        return [min(slots, key=key)]
    return sorted(slots, key=key)[:count]  # a C-level sort beats heapq's Python loop here


class EvictionStrategy(ABC):
    """Chooses the slots a pool gives up when it is over budget."""

    @abstractmethod
    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        """Up to ``count`` of ``slots`` to evict, the first to go first."""

    def demote_to(self, slot: Slot) -> SlotTier | None:
        """The tier a victim moves down to instead of being removed; ``None`` removes it."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LRUEviction(EvictionStrategy):
    """Evicts the least recently accessed slots (the default)."""

    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        return smallest(slots, count, attrgetter("accessed_at"))


class FIFOEviction(EvictionStrategy):
    """Evicts the slots created first."""

    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        return smallest(slots, count, attrgetter("created_at"))


class PriorityEviction(EvictionStrategy):
    """Evicts the lowest-priority slots; least recently accessed first among equals."""

    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        return smallest(slots, count, attrgetter("priority", "accessed_at"))


class DemotionEviction(EvictionStrategy):
    """Demotes before removing: LONG_TERM -> SESSION -> TURN -> removed.

    Victims come from the shortest-lived tier first (least recently accessed within a tier),
    so TURN slots go before a SESSION slot is demoted, and a LONG_TERM slot is the last to
    lose its persistence.
    """

    def select(self, slots: list[Slot], count: int) -> list[Slot]:
        return smallest(slots, count, lambda s: (TIER_RANK[s.tier], s.accessed_at))

    def demote_to(self, slot: Slot) -> SlotTier | None:
        rank = TIER_RANK[slot.tier]
        return TIER_ORDER[rank - 1] if rank > 0 else None


_BY_NAME: dict[str, type[EvictionStrategy]] = {
    "lru": LRUEviction,
    "fifo": FIFOEviction,
    "priority": PriorityEviction,
    "demotion": DemotionEviction,
}


def eviction_strategy_for(name: str) -> EvictionStrategy:
    """The strategy a config names (``"lru"``, ``"fifo"``, ``"priority"``, ``"demotion"``).

    Raises:
        ValueError: an unknown name.
    """
    cls = _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"unknown eviction strategy {name!r}; expected one of {sorted(_BY_NAME)}")
    return cls()
