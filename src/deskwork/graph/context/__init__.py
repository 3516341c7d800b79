"""Context slots: tiered key-value context with token budgets, eviction and persistence.

``slots`` (``Slot``, ``SlotPool``, ``SlotTier``, ``TIER_ORDER``), ``manager`` (``SlotManager``),
``eviction`` (strategies) and ``persistence`` (``SlotPersistence`` backends). Names load lazily,
so ``deskwork.graph.core`` can import ``context.slots`` without a cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskwork.graph.context.eviction import (
        DemotionEviction,
        EvictionStrategy,
        FIFOEviction,
        LRUEviction,
        PriorityEviction,
    )
    from deskwork.graph.context.manager import SlotManager
    from deskwork.graph.context.persistence import (
        InMemorySlotPersistence,
        SlotPersistence,
        StoreSlotPersistence,
    )
    from deskwork.graph.context.slots import TIER_ORDER, Slot, SlotPool, SlotTier

__all__ = [
    "TIER_ORDER",
    "DemotionEviction",
    "EvictionStrategy",
    "FIFOEviction",
    "InMemorySlotPersistence",
    "LRUEviction",
    "PriorityEviction",
    "Slot",
    "SlotManager",
    "SlotPersistence",
    "SlotPool",
    "SlotTier",
    "StoreSlotPersistence",
]

_LAZY = {
    "TIER_ORDER": "slots",
    "Slot": "slots",
    "SlotPool": "slots",
    "SlotTier": "slots",
    "SlotManager": "manager",
    "DemotionEviction": "eviction",
    "EvictionStrategy": "eviction",
    "FIFOEviction": "eviction",
    "LRUEviction": "eviction",
    "PriorityEviction": "eviction",
    "InMemorySlotPersistence": "persistence",
    "SlotPersistence": "persistence",
    "StoreSlotPersistence": "persistence",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deskwork.graph.context' has no attribute {name!r}")
    return getattr(importlib.import_module(f"deskwork.graph.context.{module}"), name)
