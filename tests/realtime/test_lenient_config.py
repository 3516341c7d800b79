"""Configs loaded at run time never take the engine down: lenient by default, strict on demand."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from rt_support import dynamic_config, make_context, reply_json

from deskwork.realtime import (
    AgentConfig,
    AgentConfigurationError,
    AgentEngine,
    Blackboard,
    TriggerType,
)
from deskwork.realtime.core._problems import STRICT_ENV
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter

LOGGER = "deskwork.realtime.config"


def problems(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [r.config_problem for r in caplog.records if hasattr(r, "config_problem")]


def rules(*items: dict[str, Any], mode: str = "all") -> dict[str, Any]:
    return {"mode": mode, "rules": list(items)}


BROKEN_RULES = {
    "unknown operator": {"var": "phase", "op": "equals", "value": "x"},
    "in on a string": {"var": "phase", "op": "in", "value": "negotiation"},
    "mod 0": {"meta": "turn_count", "op": "mod", "value": 0},
    "missing value": {"var": "phase", "op": "eq"},
    "not an object": "phase == x",
}


@pytest.mark.parametrize("rule", BROKEN_RULES.values(), ids=BROKEN_RULES.keys())
async def test_a_broken_rule_evaluates_false_with_one_warning(
    rule: Any, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = ScriptedAdapter(default=reply_json(has_insight=True, content="ran"))
    engine = AgentEngine(adapter=adapter)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        gated = DynamicAgent(dynamic_config("Gated", trigger_conditions=rules(rule, mode="all")))
        either = DynamicAgent(
            dynamic_config(
                "Either",
                trigger_conditions=rules(rule, {"var": "phase", "op": "exists"}, mode="any"),
            )
        )
    [problem] = [p for p in problems(caplog) if p["agent_id"] == "Gated"]
    assert len(problems(caplog)) == 2  # one per agent that has the rule
    assert problem["field"] == "trigger_conditions.rules[0]"
    assert problem["action"] == "rule evaluates false"
    assert gated.problems[0].field == "trigger_conditions.rules[0]"
    engine.register_agent(gated)
    engine.register_agent(either)
    board = Blackboard(variables={"phase": "negotiation"})
    response = await engine.process_turn(make_context(board=board, turn_count=10))
    # the broken rule is false; the agent whose other rule holds still runs
    assert [i.agent_id for i in response.insights] == ["either"]


@pytest.mark.parametrize(
    "block",
    [{"mode": "some", "rules": []}, {"rules": {"var": "x"}}, {"mode": "all", "rule": []}, "x"],
)
async def test_a_broken_block_makes_the_condition_false(
    block: Any, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = ScriptedAdapter(default=reply_json(has_insight=True, content="ran"))
    engine = AgentEngine(adapter=adapter)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        engine.register_agent(DynamicAgent(dynamic_config("Broken", trigger_conditions=block)))
    [problem] = problems(caplog)
    assert (problem["field"], problem["action"]) == (
        "trigger_conditions",
        "condition evaluates false",
    )
    engine.register_agent(DynamicAgent(dynamic_config("Fine")))
    response = await engine.process_turn(make_context())
    assert [i.agent_id for i in response.insights] == ["fine"]
    assert response.debug_info["phases"][0]["agents_skipped"] == {"broken": "conditions_not_met"}


def test_numbers_are_clamped_or_unset_with_one_warning_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = dynamic_config(
        trigger_config={
            "mode": ["turn_based", "sometimes"],
            "cooldown": -5,
            "trigger_interval": "soon",
            "silence_threshold": -1,
            "keywords": "price, discount",
        },
        model_config={"max_tokens": 0, "context_turns": -2, "timeout": "x"},
        priority="high",
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(config)
    fields = [p["field"] for p in problems(caplog)]
    assert sorted(fields) == sorted(
        [
            "trigger_config.mode",
            "trigger_config.cooldown",
            "trigger_config.trigger_interval",
            "trigger_config.silence_threshold",
            "model_config.max_tokens",
            "model_config.context_turns",
            "model_config.timeout",
            "priority",
        ]
    )
    assert len(caplog.records) == len(fields)  # one warning per problem, nothing else
    c = agent.config
    assert c.trigger_types == [TriggerType.TURN_BASED]
    assert (c.cooldown, c.trigger_interval, c.silence_threshold) == (0, None, None)
    assert (c.max_tokens, c.priority, c.trigger_keywords) == (None, 0, ["price", "discount"])
    assert agent.settings.llm.context_turns == 0


def test_numeric_strings_from_a_database_are_accepted(caplog: pytest.LogCaptureFixture) -> None:
    config = dynamic_config(
        trigger_config={"mode": "interval", "trigger_interval": "60", "cooldown": "5"},
        model_config={"max_tokens": "200", "temperature": "0.3"},
        priority="3",
        model="openai/gpt-4.1-mini",  # 2.6 also reads model and context_turns at the top
        context_turns=2,
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(config)
    assert problems(caplog) == []
    assert (agent.config.trigger_interval, agent.config.cooldown) == (60, 5)
    assert (agent.config.max_tokens, agent.config.priority) == (200, 3)
    assert (agent.config.model, agent.config.temperature) == ("openai/gpt-4.1-mini", 0.3)
    assert agent.settings.llm.context_turns == 2


def test_unknown_output_format_and_event_without_subscriptions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(
            dynamic_config(output_format="fancy", trigger_config={"mode": "event"})
        )
    assert agent.output_format.name == "default"
    assert {p["field"] for p in problems(caplog)} == {
        "output_format",
        "trigger_config.subscribed_events",
    }


def test_strict_mode_lists_every_problem_at_once() -> None:
    config = dynamic_config(
        trigger_config={"cooldown": -1, "trigger_interval": 0},
        model_config={"max_tokens": -3},
        trigger_conditions=rules({"var": "x", "op": "??", "value": 1}),
    )
    with pytest.raises(AgentConfigurationError) as caught:
        DynamicAgent(config, strict=True)
    fields = {p.field for p in caught.value.problems}
    assert fields == {
        "trigger_config.cooldown",
        "trigger_config.trigger_interval",
        "model_config.max_tokens",
        "trigger_conditions.rules[0]",
    }
    assert all(f in str(caught.value) for f in fields)


def test_environment_switch_makes_strict_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    config = dynamic_config(model_config={"max_tokens": 0})
    DynamicAgent(config)  # lenient
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(AgentConfigurationError, match="max_tokens"):
        DynamicAgent(config)
    DynamicAgent(config, strict=False)  # an explicit choice wins


def test_unusable_configs_still_raise_in_lenient_mode() -> None:
    with pytest.raises(AgentConfigurationError, match="text"):
        DynamicAgent({"name": "No prompt"}, strict=False)
    with pytest.raises(AgentConfigurationError, match="template syntax error"):
        DynamicAgent(dynamic_config(text="{% if %}"), strict=False)


def test_agent_config_strict_false_is_lenient(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        config = AgentConfig(
            name="a",
            strict=False,
            trigger_types=["turn_based", "bogus"],
            trigger_interval=-1,
            max_tokens=0,
            trigger_conditions=rules({"var": "x", "op": "in", "value": "abc"}),
        )
    assert len(problems(caplog)) == 4 == len(config.problems)
    assert (config.trigger_types, config.trigger_interval, config.max_tokens) == (
        [TriggerType.TURN_BASED],
        None,
        None,
    )
    with pytest.raises(AgentConfigurationError, match="in"):
        AgentConfig(name="a", trigger_conditions=rules({"var": "x", "op": "in", "value": "a"}))
