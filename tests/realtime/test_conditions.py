"""Trigger conditions: every operator, all/any, missing keys, invalid rules."""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import ScriptAgent, dynamic_config, make_context

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import AgentConfig, AgentEngine, Blackboard, ConditionEvaluator, Fact
from deskwork.realtime.core.conditions import TriggerConditions
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter


@pytest.fixture
def board() -> Blackboard:
    return Blackboard(
        variables={
            "phase": "negotiation",
            "sentiment": 0.7,
            "topics": ["pricing", "timeline"],
            "note": "customer mentioned pricing",
            "flag": 0,
            "empty_text": "",
            "settings": {"mode": "x"},
        },
        queues={"pending": ["What's the price?"], "done": []},
        facts=[Fact(type="budget", value=50_000, source_agent="x")],
        memory={"me": {"count": 3}, "other": {"seen": True}},
    )


META = {"turn_count": 10, "trigger_type": "turn_based", "phase": 1, "keyword": "price"}

CASES: list[tuple[dict[str, Any], bool]] = [
    ({"var": "phase", "op": "eq", "value": "negotiation"}, True),
    ({"var": "phase", "op": "eq", "value": "closing"}, False),
    ({"var": "phase", "value": "negotiation"}, True),  # op defaults to eq
    ({"var": "phase", "op": "neq", "value": "closed"}, True),
    ({"var": "phase", "op": "neq", "value": "negotiation"}, False),
    ({"var": "sentiment", "op": "gt", "value": 0.5}, True),
    ({"var": "sentiment", "op": "gt", "value": 0.7}, False),
    ({"var": "sentiment", "op": "gte", "value": 0.7}, True),
    ({"var": "sentiment", "op": "lt", "value": 0.7}, False),
    ({"var": "sentiment", "op": "lt", "value": 1}, True),
    ({"var": "sentiment", "op": "lte", "value": 0.7}, True),
    ({"var": "sentiment", "op": "lte", "value": 0.1}, False),
    ({"var": "phase", "op": "in", "value": ["negotiation", "closing"]}, True),
    ({"var": "phase", "op": "in", "value": ["closing"]}, False),
    ({"var": "phase", "op": "not_in", "value": ["closed", "lost"]}, True),
    ({"var": "phase", "op": "not_in", "value": ["negotiation"]}, False),
    ({"var": "topics", "op": "contains", "value": "pricing"}, True),
    ({"var": "topics", "op": "contains", "value": "legal"}, False),
    ({"var": "note", "op": "contains", "value": "pricing"}, True),
    ({"var": "settings", "op": "contains", "value": "mode"}, True),
    ({"var": "phase", "op": "exists"}, True),
    ({"var": "flag", "op": "exists"}, False),  # truthiness
    ({"var": "flag", "op": "present"}, True),  # presence only
    ({"var": "flag", "op": "not_exists"}, True),
    ({"var": "phase", "op": "not_exists"}, False),
    ({"var": "topics", "op": "not_empty"}, True),
    ({"var": "empty_text", "op": "empty"}, True),
    ({"var": "topics", "op": "empty"}, False),
    ({"queue": "pending", "op": "not_empty"}, True),
    ({"queue": "done", "op": "not_empty"}, False),
    ({"queue": "done", "op": "empty"}, True),
    ({"queue": "pending", "op": "gte", "value": 1}, True),  # queue length
    ({"queue": "pending", "op": "gt", "value": 1}, False),
    ({"queue": "pending", "op": "eq", "value": 1}, True),
    ({"fact": "budget", "op": "exists"}, True),
    ({"fact": "budget", "op": "gte", "value": 40_000}, True),
    ({"fact": "timeline", "op": "exists"}, False),
    ({"memory": "count", "op": "eq", "value": 3}, True),
    ({"memory": "other.seen", "op": "eq", "value": True}, True),
    ({"meta": "turn_count", "op": "gte", "value": 3}, True),
    ({"meta": "turn_count", "op": "mod", "value": 5}, True),
    ({"meta": "turn_count", "op": "mod", "value": 3, "result": 1}, True),
    ({"meta": "turn_count", "op": "mod", "value": 3}, False),
    ({"meta": "keyword", "op": "eq", "value": "price"}, True),
    ({"meta": "trigger_type", "op": "eq", "value": "turn_based"}, True),
]


@pytest.mark.parametrize(("rule", "expected"), CASES, ids=[str(c[0]) for c in CASES])
def test_operator(board: Blackboard, rule: dict[str, Any], expected: bool) -> None:
    conditions = {"mode": "all", "rules": [rule]}
    assert ConditionEvaluator().evaluate(conditions, board, META, "me") is expected


def test_every_documented_operator_is_covered() -> None:
    documented = {
        "eq",
        "neq",
        "gt",
        "gte",
        "lt",
        "lte",
        "in",
        "not_in",
        "contains",
        "exists",
        "not_exists",
        "not_empty",
        "empty",
        "mod",
    }
    assert documented <= {rule.get("op", "eq") for rule, _ in CASES}


MISSING: list[tuple[dict[str, Any], bool]] = [
    ({"var": "nope", "op": "eq", "value": None}, False),
    ({"var": "nope", "op": "neq", "value": "x"}, False),
    ({"var": "nope", "op": "gt", "value": 1}, False),
    ({"var": "nope", "op": "in", "value": ["a"]}, False),
    ({"var": "nope", "op": "not_in", "value": ["a"]}, False),
    ({"var": "nope", "op": "contains", "value": "a"}, False),
    ({"var": "nope", "op": "exists"}, False),
    ({"var": "nope", "op": "present"}, False),
    ({"var": "nope", "op": "not_empty"}, False),
    ({"var": "nope", "op": "mod", "value": 2}, False),
    ({"var": "nope", "op": "not_exists"}, True),
    ({"var": "nope", "op": "empty"}, True),
    ({"queue": "nope", "op": "not_empty"}, False),
    ({"fact": "nope", "op": "eq", "value": 1}, False),
    ({"memory": "nope", "op": "eq", "value": 1}, False),
    ({"memory": "ghost.key", "op": "eq", "value": 1}, False),
    ({"meta": "nope", "op": "gte", "value": 1}, False),
]


@pytest.mark.parametrize(("rule", "expected"), MISSING, ids=[str(c[0]) for c in MISSING])
def test_rule_on_missing_key(board: Blackboard, rule: dict[str, Any], expected: bool) -> None:
    conditions = {"rules": [rule]}
    assert ConditionEvaluator().evaluate(conditions, board, META, "me") is expected


def test_type_mismatch_is_false_not_an_error(board: Blackboard) -> None:
    rules = [
        {"var": "phase", "op": "gt", "value": 3},
        {"var": "sentiment", "op": "contains", "value": 1},
    ]
    for rule in rules:
        assert not ConditionEvaluator().evaluate({"rules": [rule]}, board, META, "me")


def test_all_and_any_modes(board: Blackboard) -> None:
    rules = [
        {"var": "phase", "op": "eq", "value": "negotiation"},
        {"var": "phase", "op": "eq", "value": "closing"},
    ]
    evaluator = ConditionEvaluator()
    assert not evaluator.evaluate({"mode": "all", "rules": rules}, board, META, "me")
    assert evaluator.evaluate({"mode": "any", "rules": rules}, board, META, "me")
    assert not evaluator.evaluate({"mode": "any", "rules": rules[1:]}, board, META, "me")
    assert evaluator.evaluate({"mode": "all", "rules": []}, board, META, "me")
    assert evaluator.evaluate(None, board, META, "me")


INVALID: list[tuple[Any, str]] = [
    ({"rules": [{"var": "phase", "op": "equals", "value": 1}]}, "unknown operator 'equals'"),
    ({"rules": [{"variable": "phase", "op": "eq", "value": 1}]}, "exactly one of"),
    ({"rules": [{"var": "a", "fact": "b", "op": "exists"}]}, "exactly one of"),
    ({"rules": [{"var": "phase", "op": "eq"}]}, "needs a 'value'"),
    ({"rules": [{"var": "phase", "op": "in", "value": "negotiation"}]}, "list 'value'"),
    ({"rules": [{"var": "n", "op": "gt", "value": [1]}]}, "number or string"),
    ({"rules": [{"meta": "turn_count", "op": "mod", "value": 0}]}, "non-zero"),
    # NaN was accepted and the rule silently never held (the agent never ran)
    ({"rules": [{"var": "n", "op": "gt", "value": float("nan")}]}, "finite number"),
    ({"rules": [{"var": "n", "op": "eq", "value": float("inf")}]}, "finite number"),
    (
        {"rules": [{"meta": "turn_count", "op": "mod", "value": 2, "result": float("nan")}]},
        "finite",
    ),
    ({"rules": [{"var": "x", "op": "eq", "value": 1, "result": 0}]}, "'result'"),
    ({"rules": [{"var": "x", "op": "eq", "value": 1, "vlaue": 2}]}, "unknown rule fields"),
    ({"rules": [{"var": "", "op": "exists"}]}, "non-empty string"),
    ({"rules": ["phase == 1"]}, "must be an object"),
    ({"mode": "some", "rules": []}, "'all' or 'any'"),
    ({"rules": {"var": "x"}}, "must be a list"),
    ({"mode": "all", "rule": []}, "unknown fields"),
    ("phase == 1", "mode and rules"),
]


@pytest.mark.parametrize(("conditions", "message"), INVALID, ids=[m for _, m in INVALID])
def test_invalid_rule_is_a_configuration_error(conditions: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        TriggerConditions.parse(conditions)
    with pytest.raises(ConfigurationError, match=message):
        AgentConfig(name="a", trigger_conditions=conditions)
    with pytest.raises(ConfigurationError, match=message):
        DynamicAgent(dynamic_config(trigger_conditions=conditions), strict=True)


def test_invalid_rule_assigned_later_is_a_configuration_error() -> None:
    config = AgentConfig(name="a")
    with pytest.raises(ConfigurationError, match="unknown operator"):
        config.trigger_conditions = {"rules": [{"var": "x", "op": "??", "value": 1}]}


def test_conditions_round_trip_in_documented_shape() -> None:
    raw = {
        "mode": "any",
        "rules": [
            {"var": "phase", "op": "in", "value": ["negotiation", "closing"]},
            {"queue": "pending_questions", "op": "not_empty"},
            {"meta": "turn_count", "op": "mod", "value": 5, "result": 0},
        ],
    }
    parsed = TriggerConditions.parse(raw)
    assert parsed is not None
    assert parsed.model_dump() == raw
    assert TriggerConditions.model_validate(raw) == parsed


async def test_conditions_gate_agents_in_the_engine() -> None:
    gated = ScriptAgent(
        "gated",
        trigger_conditions={
            "mode": "all",
            "rules": [
                {"var": "phase", "op": "eq", "value": "negotiation"},
                {"meta": "turn_count", "op": "gte", "value": 3},
            ],
        },
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(gated)
    board = Blackboard(variables={"phase": "discovery"})
    await engine.process_turn(make_context(board=board, turn_count=5))
    assert gated.calls == []
    board.set_var("phase", "negotiation")
    await engine.process_turn(make_context(board=board, turn_count=2))
    assert gated.calls == []
    await engine.process_turn(make_context(board=board, turn_count=3))
    assert len(gated.calls) == 1


@pytest.mark.parametrize(
    ("board", "meta", "message"),
    [
        (None, {}, "blackboard must be a Blackboard, got NoneType"),
        ({"variables": {"x": 1}}, {}, "blackboard must be a Blackboard, got dict"),
        ("board", {}, "blackboard must be a Blackboard, got str"),
    ],
)
def test_evaluate_names_a_board_or_meta_of_the_wrong_type(
    board: Any, meta: Any, message: str
) -> None:
    """Before: AttributeError: 'NoneType' object has no attribute 'has_var'."""
    rules = {"rules": [{"var": "x", "op": "exists"}]}
    with pytest.raises(TypeError, match=message):
        ConditionEvaluator().evaluate(rules, board, meta, "me")
    with pytest.raises(TypeError, match="meta must be a mapping, got NoneType"):
        ConditionEvaluator().evaluate(rules, Blackboard(), None, "me")  # type: ignore[arg-type]
