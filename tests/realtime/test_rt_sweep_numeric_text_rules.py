"""Condition rules stored as text in a database (``"value": "3"``) hold as their numbers:
they loaded without a problem and then never held (``5 >= "3"`` is a type mismatch), or a
``mod`` by ``"5"`` was refused as no number."""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import make_context

from deskwork.realtime import Blackboard, ConditionEvaluator
from deskwork.realtime.core.conditions import TriggerConditions


def _holds(rule: dict[str, Any], board: Blackboard, turn_count: int = 5) -> bool:
    block = TriggerConditions.parse({"rules": [rule]})
    return ConditionEvaluator().evaluate(block, board, {"turn_count": turn_count}, "coach")


@pytest.mark.parametrize(
    ("rule", "holds"),
    [
        ({"meta": "turn_count", "op": "gte", "value": "3"}, True),
        ({"meta": "turn_count", "op": "lt", "value": "3"}, False),
        ({"var": "score", "op": "gt", "value": "0.5"}, True),
        ({"var": "count_text", "op": "lte", "value": 12}, True),  # the board holds "12"
        ({"meta": "turn_count", "op": "mod", "value": "5"}, True),
        ({"meta": "turn_count", "op": "mod", "value": "2", "result": "1"}, True),
        ({"var": "count_text", "op": "mod", "value": 4}, True),
        ({"var": "name", "op": "gt", "value": "alice"}, True),  # two texts: still texts
        ({"var": "name", "op": "gt", "value": 3}, False),  # no number in "bob"
    ],
)
def test_a_number_and_a_numeric_text_compare_as_numbers(rule: dict[str, Any], holds: bool) -> None:
    board = make_context().blackboard
    assert board is not None
    board.set_var("score", 0.9)
    board.set_var("count_text", "12")
    board.set_var("name", "bob")
    assert _holds(rule, board) is holds
