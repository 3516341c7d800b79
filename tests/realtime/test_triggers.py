"""Every trigger type, cooldowns, FORCE and agents with several modes."""

from __future__ import annotations

import pytest
from rt_support import FakeClock, Recorder, ScriptAgent, dynamic_config, make_context

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import (
    AgentConfigOverride,
    AgentEngine,
    AgentResponse,
    Blackboard,
    TriggerType,
)
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter


def setup(*agents: ScriptAgent, clock: FakeClock | None = None) -> tuple[AgentEngine, Recorder]:
    recorder = Recorder()
    engine = AgentEngine(
        adapter=ScriptedAdapter(), callbacks=[recorder], clock=clock or FakeClock()
    )
    for agent in agents:
        engine.register_agent(agent)
    return engine, recorder


async def test_turn_based_is_the_default_trigger() -> None:
    agent = ScriptAgent("coach")
    keyword_only = ScriptAgent("kw", trigger_types=[TriggerType.KEYWORD])
    engine, _ = setup(agent, keyword_only)
    await engine.process_turn(make_context())
    assert len(agent.calls) == 1 and keyword_only.calls == []
    assert agent.calls[0].trigger_type == TriggerType.TURN_BASED


async def test_keyword_trigger_with_the_helper() -> None:
    pricing = ScriptAgent(
        "pricing", trigger_types=[TriggerType.KEYWORD], trigger_keywords=["price", "discount"]
    )
    legal = ScriptAgent("legal", trigger_types=[TriggerType.KEYWORD], trigger_keywords=["contract"])
    turn = ScriptAgent("turn")
    engine, _ = setup(pricing, legal, turn)
    text = "Can we get a DISCOUNT on the Price?"
    matches = engine.check_keyword_triggers(text)
    assert [(agent.config.id, keyword) for agent, keyword in matches] == [("pricing", "price")]
    assert engine.check_keyword_triggers(text, allowed_agent_ids=["legal"]) == []
    allowed = [agent.config.id for agent, _ in matches]
    await engine.process_turn(
        make_context(text),
        allowed_agent_ids=allowed,
        trigger_type=TriggerType.KEYWORD,
        trigger_metadata={"keyword": "price"},
    )
    assert len(pricing.calls) == 1 and legal.calls == [] and turn.calls == []
    assert pricing.calls[0].trigger_metadata == {"keyword": "price"}


async def test_keyword_trigger_skips_agents_whose_keywords_do_not_match() -> None:
    pricing = ScriptAgent(
        "pricing", trigger_types=[TriggerType.KEYWORD], trigger_keywords=["price"]
    )
    any_keyword = ScriptAgent("any", trigger_types=[TriggerType.KEYWORD])
    engine, recorder = setup(pricing, any_keyword)
    await engine.process_turn(
        make_context(), trigger_type=TriggerType.KEYWORD, trigger_metadata={"keyword": "contract"}
    )
    assert pricing.calls == [] and len(any_keyword.calls) == 1
    assert recorder.names("agent_skipped") == [("Pricing", "keyword_mismatch")]
    await engine.process_turn(
        make_context(), trigger_type=TriggerType.KEYWORD, trigger_metadata={"text": "the PRICE is"}
    )
    assert len(pricing.calls) == 1


async def test_silence_trigger_respects_the_threshold() -> None:
    facilitator = ScriptAgent(
        "facilitator", trigger_types=[TriggerType.SILENCE], silence_threshold=5
    )
    turn = ScriptAgent("turn")
    engine, recorder = setup(facilitator, turn)
    await engine.process_turn(
        make_context(), trigger_type=TriggerType.SILENCE, trigger_metadata={"silence_duration": 3}
    )
    assert facilitator.calls == []
    assert recorder.names("agent_skipped") == [("Facilitator", "silence_below_threshold")]
    await engine.process_turn(
        make_context(), trigger_type=TriggerType.SILENCE, trigger_metadata={"silence_duration": 6}
    )
    assert len(facilitator.calls) == 1 and turn.calls == []


async def test_interval_trigger_waits_for_its_interval() -> None:
    clock = FakeClock()
    monitor = ScriptAgent("monitor", trigger_types=[TriggerType.INTERVAL], trigger_interval=60)
    engine, recorder = setup(monitor, clock=clock)
    interval = TriggerType.INTERVAL
    await engine.process_turn(make_context(), trigger_type=interval)
    clock.advance(30)
    await engine.process_turn(make_context(), trigger_type=interval)
    assert len(monitor.calls) == 1
    assert recorder.names("agent_skipped") == [("Monitor", "interval_not_elapsed")]
    clock.advance(31)
    await engine.process_turn(make_context(), trigger_type=interval)
    assert len(monitor.calls) == 2


async def test_event_trigger_runs_in_phase_two() -> None:
    emitter = ScriptAgent(
        "emitter",
        response=AgentResponse(events=[{"name": "objection_raised"}]),  # type: ignore[list-item]
    )
    listener = ScriptAgent(
        "listener", trigger_types=[TriggerType.EVENT], subscribed_events=["objection_raised"]
    )
    engine, _ = setup(emitter, listener)
    await engine.process_turn(make_context())
    assert [c.phase for c in listener.calls] == [2]


async def test_cooldown_is_per_agent_and_per_session() -> None:
    clock = FakeClock()
    agent = ScriptAgent("coach", cooldown=10)
    engine, recorder = setup(agent, clock=clock)
    await engine.process_turn(make_context(session_id="a"))
    clock.advance(5)
    await engine.process_turn(make_context(session_id="a"))
    assert len(agent.calls) == 1
    assert recorder.names("agent_skipped") == [("Coach", "cooldown")]
    await engine.process_turn(make_context(session_id="b"))  # another session: not cooling
    assert len(agent.calls) == 2
    clock.advance(5)
    await engine.process_turn(make_context(session_id="a"))
    assert len(agent.calls) == 3
    assert agent.cooldown_remaining("a") == 10
    agent.reset_cooldown()
    assert agent.cooldown_remaining("a") == 0


async def test_last_runs_of_many_sessions_are_forgotten_once_nothing_needs_them() -> None:
    """A long-running host sees many sessions, one after another: the agent keeps the last
    runs of those still cooling down (or within its interval), not of every session ever
    seen; and what a cooldown, a session's longer cooldown or the interval needs stays."""
    clock = FakeClock()
    coach = ScriptAgent("coach", cooldown=10)
    monitor = ScriptAgent("monitor", trigger_types=[TriggerType.INTERVAL], trigger_interval=60)
    engine, _ = setup(coach, monitor, clock=clock)
    slow = {"coach": AgentConfigOverride(cooldown_modifier=2000)}
    await engine.process_turn(make_context(session_id="slow", agent_config_overrides=slow))
    interval = TriggerType.INTERVAL
    for n in range(300):
        await engine.process_turn(make_context(session_id=f"s{n}"))
        await engine.process_turn(make_context(session_id=f"s{n}"), trigger_type=interval)
        clock.advance(1)
    assert (len(coach.calls), len(monitor.calls)) == (301, 300)
    assert len(coach._last_run) < 100 and len(monitor._last_run) < 200
    assert coach.last_run_at("s0") is None and monitor.last_run_at("s0") is None
    assert coach.cooldown_remaining("s295") == 5  # still cooling down
    assert monitor.last_run_at("s250") == clock.now - 50  # its interval has not elapsed
    assert coach.cooldown_remaining("slow", 2010) == 1710  # its session's own cooldown
    await engine.process_turn(make_context(session_id="slow", agent_config_overrides=slow))
    await engine.process_turn(make_context(session_id="s295"))
    await engine.process_turn(make_context(session_id="s250"), trigger_type=interval)
    assert (len(coach.calls), len(monitor.calls)) == (301, 300)


async def test_failing_agent_also_waits_out_its_cooldown() -> None:
    clock = FakeClock()
    agent = ScriptAgent("broken", cooldown=10, error=RuntimeError("x"))
    engine, _ = setup(agent, clock=clock)
    await engine.process_turn(make_context())
    await engine.process_turn(make_context())
    assert len(agent.calls) == 1


async def test_force_bypasses_trigger_type_cooldown_and_conditions() -> None:
    clock = FakeClock()
    agent = ScriptAgent(
        "guarded",
        cooldown=100,
        trigger_types=[TriggerType.EVENT],
        subscribed_events=["never"],
        trigger_conditions={"rules": [{"var": "phase", "op": "eq", "value": "never"}]},
    )
    other = ScriptAgent("other")
    engine, _ = setup(agent, other, clock=clock)
    await engine.process_turn(make_context(), trigger_type=TriggerType.FORCE)
    await engine.process_turn(
        make_context(), trigger_type=TriggerType.FORCE, allowed_agent_ids=["guarded"]
    )
    assert len(agent.calls) == 2
    assert len(other.calls) == 1  # the allow-list still applies to FORCE
    assert agent.calls[0].trigger_type == TriggerType.FORCE
    await engine.process_turn(make_context(), trigger_type=TriggerType.TURN_BASED)
    assert len(agent.calls) == 2


async def test_agent_with_several_modes_answers_each() -> None:
    clock = FakeClock()
    agent = ScriptAgent("multi", trigger_types=[TriggerType.TURN_BASED, TriggerType.KEYWORD])
    engine, _ = setup(agent, clock=clock)
    await engine.process_turn(make_context(), trigger_type=TriggerType.TURN_BASED)
    await engine.process_turn(make_context(), trigger_type=TriggerType.KEYWORD)
    await engine.process_turn(make_context(), trigger_type=TriggerType.SILENCE)
    assert [c.trigger_type for c in agent.calls] == [TriggerType.TURN_BASED, TriggerType.KEYWORD]


async def test_trigger_type_may_be_given_as_a_string() -> None:
    agent = ScriptAgent("kw", trigger_types=[TriggerType.KEYWORD])
    engine, _ = setup(agent)
    await engine.process_turn(make_context(), trigger_type="keyword")  # type: ignore[arg-type]
    assert len(agent.calls) == 1


def test_dynamic_agent_trigger_config_maps_to_agent_config() -> None:
    agent = DynamicAgent(
        dynamic_config(
            trigger_config={
                "mode": ["turn_based", "keyword", "silence", "interval", "event"],
                "cooldown": 5,
                "keywords": ["price"],
                "silence_threshold": 30,
                "trigger_interval": 60,
                "subscribed_events": ["question_detected"],
            },
            priority=7,
        )
    )
    config = agent.config
    assert config.trigger_types == [
        TriggerType.TURN_BASED,
        TriggerType.KEYWORD,
        TriggerType.SILENCE,
        TriggerType.INTERVAL,
        TriggerType.EVENT,
    ]
    assert (config.cooldown, config.trigger_keywords, config.silence_threshold) == (
        5,
        ["price"],
        30,
    )
    assert (config.trigger_interval, config.subscribed_events) == (60, ["question_detected"])
    assert (config.priority, config.id) == (7, "coach")
    default = DynamicAgent({"name": "Plain Agent", "text": "x"}).config
    assert default.trigger_types == [TriggerType.TURN_BASED]
    assert default.cooldown == 15


@pytest.mark.parametrize(
    ("trigger_config", "message"),
    [
        ({"mode": "sometimes"}, "trigger_config.mode"),
        ({"mode": "event"}, "subscribed_events"),
        ({"cooldown": -1}, "cooldown"),
    ],
)
def test_invalid_trigger_config_is_a_configuration_error(
    trigger_config: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        DynamicAgent(dynamic_config(trigger_config=trigger_config), strict=True)


async def test_cooldown_blocks_an_agent_in_phase_two_after_phase_one() -> None:
    clock = FakeClock()
    both = ScriptAgent(
        "both",
        cooldown=10,
        trigger_types=[TriggerType.TURN_BASED, TriggerType.EVENT],
        subscribed_events=["e"],
    )
    source = ScriptAgent("source", response=AgentResponse(events=[{"name": "e"}]))  # type: ignore[list-item]
    engine, recorder = setup(source, both, clock=clock)
    board = Blackboard()
    await engine.process_turn(make_context(board=board))
    assert [c.phase for c in both.calls] == [1]
    assert ("agent_skipped", ("Both", "cooldown")) in recorder.calls
