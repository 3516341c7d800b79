"""2.6 parity of the engine: subscribers, hot swap, reasoning config, merged memory."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from rt_support import FakeClock, ScriptAgent, dynamic_config, make_context

from deskwork.realtime import (
    AgentConfigurationError,
    AgentEngine,
    AgentResponse,
    Blackboard,
    Event,
    TriggerType,
)
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter


def subscriber(agent_id: str, *events: str, **config: Any) -> ScriptAgent:
    return ScriptAgent(
        agent_id, trigger_types=[TriggerType.EVENT], subscribed_events=list(events), **config
    )


def test_get_event_subscribers_needs_the_event_trigger_and_a_matching_name() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    q, o = subscriber("q", "question"), subscriber("o", "objection", "question")
    wrong = ScriptAgent("wrong", subscribed_events=["question"])  # no TriggerType.EVENT
    for agent in (q, o, wrong, ScriptAgent("plain")):
        engine.register_agent(agent)
    assert engine.get_event_subscribers(["question"]) == [q, o]
    assert engine.get_event_subscribers(["objection", "other"]) == [o]
    assert engine.get_event_subscribers([]) == []


async def test_replace_agents_keeps_board_state_and_cooldowns() -> None:
    clock = FakeClock()
    engine = AgentEngine(adapter=ScriptedAdapter(), clock=clock)
    old = ScriptAgent("coach", cooldown=30, response=AgentResponse(variable_updates={"v": 1}))
    engine.register_agent(old)
    board = Blackboard()
    await engine.process_turn(make_context(board=board))
    new = ScriptAgent("coach", cooldown=30, response=AgentResponse(variable_updates={"v": 2}))
    extra = ScriptAgent("extra", response=AgentResponse(queue_pushes={"q": ["x"]}))
    engine.replace_agents([new, extra])
    assert engine.agents == [new, extra]
    await engine.process_turn(make_context(board=board))
    assert new.calls == []  # the reloaded coach is still cooling down from the old one's run
    assert (board.get_var("v"), board.queues["q"]) == (1, ["x"])
    clock.advance(31)
    await engine.process_turn(make_context(board=board))
    assert board.get_var("v") == 2 and len(new.calls) == 1


def test_replace_agents_is_all_or_nothing() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    serving = ScriptAgent("serving")
    engine.register_agent(serving)
    reasoning = ScriptAgent("thinker", model="o3-mini")
    with pytest.raises(AgentConfigurationError) as caught:
        engine.replace_agents([ScriptAgent("a"), ScriptAgent("a"), reasoning])
    message = str(caught.value)
    assert "'a' is already registered" in message and "'thinker'" in message
    assert "previous agents keep serving" in message
    assert engine.agents == [serving]
    assert reasoning.llm is None  # nothing was attached


@pytest.mark.parametrize(
    ("model", "looks_reasoning"),
    [
        ("gpt-5-nano", True),
        ("openai/gpt-5-mini", True),
        ("o4-mini", True),
        ("gpt-5-chat-latest", False),
        ("gpt-4o-mini", False),
        ("anthropic/claude-sonnet-4", False),
    ],
)
def test_strict_reasoning_config(
    model: str, looks_reasoning: bool, caplog: pytest.LogCaptureFixture
) -> None:
    config = dynamic_config(model_config={"model": model})
    strict = AgentEngine(adapter=ScriptedAdapter())
    if looks_reasoning:
        with pytest.raises(AgentConfigurationError, match="reasoning_effort"):
            strict.register_agent(DynamicAgent(config))
        assert strict.agents == []
    else:
        strict.register_agent(DynamicAgent(config))
    lenient = AgentEngine(adapter=ScriptedAdapter(), strict_reasoning_config=False)
    with caplog.at_level(logging.WARNING, logger="deskwork.realtime.engine"):
        lenient.register_agent(DynamicAgent(config))
    assert len(lenient.agents) == 1
    assert any("reasoning_effort" in r.getMessage() for r in caplog.records) == looks_reasoning
    with_effort = dynamic_config(model_config={"model": model, "reasoning_effort": "low"})
    AgentEngine(adapter=ScriptedAdapter()).register_agent(DynamicAgent(with_effort))


async def test_memory_updates_by_agent_in_the_merged_result() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(ScriptAgent("a", response=AgentResponse(memory_updates={"n": 1})))
    engine.register_agent(
        ScriptAgent(
            "b",
            response=AgentResponse(memory_updates={"seen": True}, events=[Event(name="e")]),
        )
    )
    engine.register_agent(subscriber("c", "e", response=AgentResponse(memory_updates={"woke": 1})))
    response = await engine.process_turn(make_context())
    expected = {"a": {"n": 1}, "b": {"seen": True}, "c": {"woke": 1}}
    assert response.memory_updates_by_agent == expected
    assert response.memory_updates == expected


async def test_sys_keys_stay_out_of_shared_state() -> None:
    seen: list[dict[str, object]] = []

    def look(ctx: object) -> AgentResponse:
        seen.append(dict(ctx.shared_state))  # type: ignore[attr-defined]
        return AgentResponse(variable_updates={"phase": "closing"})

    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(ScriptAgent("a", response=look))
    board = Blackboard()
    context = make_context(board=board, shared_state={"legacy": 1, "sys.fake": 2})
    await engine.process_turn(context)
    assert board.get_var("sys.turn_count") == 0  # the engine still keeps them on the board
    assert not any(key.startswith("sys.") for key in seen[0])
    assert seen[0]["legacy"] == 1
    assert context.shared_state == {"legacy": 1, "sys.fake": 2, "phase": "closing"}
    assert not board.has_var("sys.fake")
