"""A slot's priority must be an int: a wrong one is refused by name before anything changes.

``set_shared``/``set_shared_tiered``/``set_agent`` and ``SlotPool.add`` took any priority
(``"high"``, ``None``, ``1.5``), so the next eviction under ``PriorityEviction`` compared it
with an int and raised a raw ``TypeError`` from deep inside, with the pool left over budget.
``from_dict`` already refused such a priority; now every write does, with the same rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.graph import ContextConfig, SlotManager, SlotPool, SlotTier
from deskwork.graph.context.eviction import PriorityEviction

WRONG = ["high", None, 1.5, True]


def _manager() -> SlotManager:
    return SlotManager(ContextConfig(shared_slots={"max_tokens": 10}, eviction_strategy="priority"))


@pytest.mark.parametrize("priority", WRONG)
def test_set_shared_refuses_a_priority_that_is_not_an_int(priority: Any) -> None:
    manager = _manager()
    manager.set_shared("kept", "x" * 16, priority=1)
    with pytest.raises(ValueError, match=rf"slot 'bad' priority must be an int, got {priority!r}"):
        manager.set_shared("bad", "x" * 16, priority=priority)
    with pytest.raises(ValueError, match="priority must be an int"):
        manager.set_shared_tiered("bad", "x" * 16, SlotTier.SESSION, priority=priority)
    with pytest.raises(ValueError, match="priority must be an int"):
        manager.set_agent("worker", "bad", "x" * 16, priority=priority)
    assert manager.shared_values() == {"kept": "x" * 16}
    assert manager.agent_pool("worker").slots() == []
    # the pool still evicts by priority: the lower one goes
    manager.set_shared("low", "x" * 16, priority=0)
    manager.set_shared("high", "x" * 16, priority=5)
    assert sorted(manager.shared_values()) == ["high", "kept"]


@pytest.mark.parametrize("priority", WRONG)
def test_slot_pool_add_refuses_it_too(priority: Any) -> None:
    pool = SlotPool(10, PriorityEviction())
    with pytest.raises(ValueError, match=r"slot 'k' priority must be an int"):
        pool.add("k", "v", priority)
    assert len(pool) == 0 and pool.total_tokens == 0


def test_from_dict_keeps_its_message() -> None:
    with pytest.raises(ValueError, match=r"from_dict: shared\['k'\] priority must be an int"):
        _manager().from_dict({"shared": {"k": {"value": 1, "priority": "x"}}})
