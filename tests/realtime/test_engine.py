"""AgentEngine semantics with custom BaseAgent subclasses."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from rt_support import Recorder, ScriptAgent, make_context

from deskwork import Desk
from deskwork.core.event import Event as BusEvent
from deskwork.event_bus import EventBus
from deskwork.exceptions import ConfigurationError
from deskwork.realtime import (
    AgentContext,
    AgentEngine,
    AgentResponse,
    Blackboard,
    Event,
    Fact,
    InsightType,
    RealtimeEventType,
    TriggerType,
)
from deskwork.realtime.core.callbacks import AgentCallbackHandler
from deskwork.realtime.core.engine import MAX_PHASES
from deskwork.testing import ScriptedAdapter


def engine_with(*agents: ScriptAgent, **kwargs: object) -> AgentEngine:
    engine = AgentEngine(adapter=ScriptedAdapter(), **kwargs)  # type: ignore[arg-type]
    for agent in agents:
        engine.register_agent(agent)
    return engine


def says(text: str, **updates: object) -> AgentResponse:
    return AgentResponse(insights=[], **updates)  # type: ignore[arg-type]


# ----------------------------------------------------------------------- phase 1


async def test_phase_one_agents_run_concurrently() -> None:
    all_started = asyncio.Barrier(4)  # one after another, the first agent waits in vain
    agents = [ScriptAgent(f"slow_{i}", gate=all_started) for i in range(4)]
    engine = engine_with(*agents, agent_timeout=30)
    response = await engine.process_turn(make_context())
    assert all(len(a.calls) == 1 for a in agents)
    assert response.insights == []  # no agent timed out at the gate


async def test_insights_are_returned_in_registration_order() -> None:
    def insight(agent: ScriptAgent, delay: float) -> ScriptAgent:
        agent.response = lambda ctx: AgentResponse(insights=[agent.create_insight(agent.config.id)])
        agent.delay = delay
        return agent

    engine = engine_with(insight(ScriptAgent("first"), 0.05), insight(ScriptAgent("second"), 0.0))
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == ["first", "second"]


async def test_agents_of_a_phase_read_the_same_snapshot() -> None:
    seen: list[object] = []

    def reader(ctx: AgentContext) -> AgentResponse:
        assert ctx.blackboard is not None
        seen.append(ctx.blackboard.get_var("phase"))
        return AgentResponse()

    writer = ScriptAgent("writer", response=AgentResponse(variable_updates={"phase": "closing"}))
    engine = engine_with(writer, ScriptAgent("reader", response=reader, delay=0.05))
    board = Blackboard(variables={"phase": "discovery"})
    await engine.process_turn(make_context(board=board))
    assert seen == ["discovery"]
    assert board.get_var("phase") == "closing"


async def test_an_agent_changing_its_context_does_not_change_what_others_see() -> None:
    seen: list[tuple[object, object, int]] = []

    def meddles(ctx: AgentContext) -> AgentResponse:
        ctx.shared_state["injected"] = True
        ctx.trigger_metadata["keyword"] = "hijacked"
        ctx.recent_segments.clear()
        return AgentResponse()

    def reads(ctx: AgentContext) -> AgentResponse:
        seen.append(
            (
                ctx.shared_state.get("injected"),
                ctx.trigger_metadata.get("keyword"),
                len(ctx.recent_segments),
            )
        )
        return AgentResponse()

    engine = engine_with(
        ScriptAgent("meddler", response=meddles), ScriptAgent("reader", response=reads, delay=0.01)
    )
    context = make_context()
    await engine.process_turn(context, trigger_metadata={"keyword": "price"})
    assert seen == [(None, "price", 1)]
    assert len(context.recent_segments) == 1
    assert "injected" not in context.shared_state


# ----------------------------------------------------------------- priority merge


async def test_higher_priority_writes_last_and_wins() -> None:
    low = ScriptAgent(
        "low",
        priority=5,
        response=AgentResponse(
            variable_updates={"phase": "closing"}, queue_pushes={"items": ["A1"]}
        ),
    )
    high = ScriptAgent(
        "high",
        priority=10,
        response=AgentResponse(
            variable_updates={"phase": "negotiation"}, queue_pushes={"items": ["B1", "B2"]}
        ),
    )
    board = Blackboard()
    engine = engine_with(high, low)  # registration order must not matter
    response = await engine.process_turn(make_context(board=board))
    assert board.get_var("phase") == "negotiation"
    assert board.queues["items"] == ["A1", "B1", "B2"]
    assert response.variable_updates == {"phase": "negotiation"}
    assert response.state_updates == {"phase": "negotiation"}


async def test_equal_priority_later_registration_wins() -> None:
    first = ScriptAgent("first", response=AgentResponse(variable_updates={"k": "first"}))
    second = ScriptAgent("second", response=AgentResponse(variable_updates={"k": "second"}))
    board = Blackboard()
    await engine_with(first, second).process_turn(make_context(board=board))
    assert board.get_var("k") == "second"


async def test_fact_merge_priority_then_confidence() -> None:
    def fact(value: str, confidence: float) -> AgentResponse:
        return AgentResponse(facts=[Fact(type="budget", value=value, confidence=confidence)])

    board = Blackboard()
    engine = engine_with(
        ScriptAgent("sure_low", priority=1, response=fact("low-priority", 0.99)),
        ScriptAgent("unsure_high", priority=9, response=fact("high-priority", 0.4)),
        ScriptAgent("a", priority=3, response=fact("tie-lower-conf", 0.5)),
        ScriptAgent("b", priority=3, response=fact("tie-higher-conf", 0.6)),
    )
    response = await engine.process_turn(make_context(board=board))
    assert [f.value for f in board.facts] == ["high-priority"]
    assert board.facts[0].source_agent == "unsure_high"
    assert len(response.facts) == 4


async def test_memory_updates_go_to_the_agents_own_memory() -> None:
    agent = ScriptAgent("tracker", response=AgentResponse(memory_updates={"count": 1}))
    board = Blackboard(memory={"tracker": {"first": True}})
    response = await engine_with(agent).process_turn(make_context(board=board))
    assert board.get_memory("tracker") == {"first": True, "count": 1}
    assert response.memory_updates == {"tracker": {"count": 1}}


async def test_agents_cannot_write_reserved_sys_variables() -> None:
    agent = ScriptAgent("sneaky", response=AgentResponse(variable_updates={"sys.turn_count": 99}))
    board = Blackboard()
    await engine_with(agent).process_turn(make_context(board=board, turn_count=4))
    assert board.get_var("sys.turn_count") == 4
    assert board.get_var("sys.session_id") == "session-1"
    assert board.get_var("sys.trigger_type") == "turn_based"


# ------------------------------------------------------------------------ phases


def emitter(agent_id: str, event: str, **kwargs: object) -> ScriptAgent:
    return ScriptAgent(
        agent_id,
        response=lambda ctx: AgentResponse(
            events=[Event(name=event, payload={"from": agent_id, "phase": ctx.phase})],
            variable_updates={f"{agent_id}_ran": True},
        ),
        **kwargs,  # type: ignore[arg-type]
    )


def subscriber(agent_id: str, *events: str, **kwargs: object) -> ScriptAgent:
    return ScriptAgent(
        agent_id,
        trigger_types=[TriggerType.EVENT],
        subscribed_events=list(events),
        **kwargs,  # type: ignore[arg-type]
    )


async def test_phase_two_runs_subscribers_of_emitted_events() -> None:
    source = emitter("extractor", "question_detected")
    listener = subscriber("responder", "question_detected")
    other = subscriber("other", "objection_raised")
    turn_only = ScriptAgent("turn_only")
    recorder = Recorder()
    engine = engine_with(source, listener, other, turn_only, callbacks=[recorder])
    response = await engine.process_turn(make_context())
    assert len(listener.calls) == 1 and other.calls == [] and len(turn_only.calls) == 1
    seen = listener.calls[0]
    assert seen.phase == 2
    assert seen.trigger_type == TriggerType.EVENT
    assert seen.blackboard is not None
    assert [e.name for e in seen.blackboard.events] == ["question_detected"]
    assert seen.blackboard.events[0].source_agent == "extractor"
    assert seen.blackboard.get_var("extractor_ran") is True  # phase 1 merged first
    assert seen.trigger_metadata["trigger_events"] == ["question_detected"]
    assert recorder.names("phase_start") == [
        (1, ["Extractor", "Turn Only"]),
        (2, ["Responder"]),
    ]
    assert [p["phase"] for p in response.debug_info["phases"]] == [1, 2]


async def test_events_are_cleared_after_the_turn_but_returned() -> None:
    board = Blackboard()
    engine = engine_with(emitter("extractor", "question_detected"))
    response = await engine.process_turn(make_context(board=board))
    assert board.events == []
    assert [e.name for e in response.events] == ["question_detected"]
    assert response.events[0].source_agent == "extractor"


async def test_events_left_on_the_board_by_the_host_wake_subscribers() -> None:
    board = Blackboard()
    board.emit_event(Event(name="user_clicked", payload={}, source_agent="host"))
    listener = subscriber("listener", "user_clicked")
    await engine_with(listener).process_turn(make_context(board=board))
    assert len(listener.calls) == 1
    assert board.events == []


@pytest.mark.parametrize(("max_phases", "expected"), [(1, []), (2, ["b"]), (3, ["b", "c"])])
async def test_max_phases_limits_event_cascades(max_phases: int, expected: list[str]) -> None:
    a = emitter("a", "e1")
    b = emitter("b", "e2", trigger_types=[TriggerType.EVENT], subscribed_events=["e1"])
    c = emitter("c", "e3", trigger_types=[TriggerType.EVENT], subscribed_events=["e2"])
    response = await engine_with(a, b, c, max_phases=max_phases).process_turn(make_context())
    ran = [agent.config.id for agent in (b, c) if agent.calls]
    assert ran == expected
    # events of the last phase are recorded but never dispatched
    assert [e.name for e in response.events] == ["e1", "e2", "e3"][:max_phases]


@pytest.mark.parametrize(("given", "used"), [(0, 1), (-3, 1), (99, MAX_PHASES), (3, 3)])
def test_max_phases_is_clamped_to_the_supported_range_with_a_warning(
    given: int, used: int, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="deskwork.realtime.engine"):
        engine = AgentEngine(max_phases=given)
    assert engine.max_phases == used
    warned = [r for r in caplog.records if "max_phases" in r.getMessage()]
    assert len(warned) == (0 if given == used else 1)


async def test_subscriber_without_event_mode_does_not_run_in_event_phase() -> None:
    wrong = ScriptAgent("wrong", subscribed_events=["e1"], trigger_types=[TriggerType.SILENCE])
    await engine_with(emitter("a", "e1"), wrong).process_turn(make_context())
    assert wrong.calls == []


# ------------------------------------------------------------------- allow-list


async def test_allowed_agent_ids_is_a_hard_filter_for_every_phase() -> None:
    a, b = emitter("a", "e1"), ScriptAgent("b")
    listener = subscriber("listener", "e1")
    engine = engine_with(a, b, listener)
    await engine.process_turn(make_context(), allowed_agent_ids=["a"])
    assert len(a.calls) == 1 and b.calls == [] and listener.calls == []
    await engine.process_turn(make_context(), allowed_agent_ids=[])
    assert len(a.calls) == 1


def test_duplicate_agent_ids_are_rejected() -> None:
    engine = engine_with(ScriptAgent("same"))
    with pytest.raises(ConfigurationError, match="already registered"):
        engine.register_agent(ScriptAgent("same"))
    assert engine.unregister_agent("same")
    assert not engine.unregister_agent("same")
    engine.register_agent(ScriptAgent("same"))
    assert engine.get_agent("same") is not None


# ----------------------------------------------------------------- bad behaviour


async def test_failing_agent_contributes_one_error_insight_and_nothing_else() -> None:
    broken = ScriptAgent("broken", error=RuntimeError("boom sk-abcdefghijklmnop"))
    healthy = ScriptAgent("healthy", response=AgentResponse(variable_updates={"ok": True}))
    recorder = Recorder()
    board = Blackboard()
    response = await engine_with(broken, healthy, callbacks=[recorder]).process_turn(
        make_context(board=board)
    )
    [error] = response.insights
    assert error.type == InsightType.ERROR
    assert error.agent_id == "broken"
    assert "RuntimeError: boom" in error.content
    assert "sk-abcdefghijklmnop" not in error.content  # secrets redacted
    assert board.get_var("ok") is True
    assert ("agent_error", ("Broken", "RuntimeError")) in recorder.calls
    assert response.debug_info["phases"][0]["agents_failed"] == ["broken"]


async def test_partial_updates_of_a_failing_agent_are_not_applied() -> None:
    bad = ScriptAgent(
        "bad",
        response=AgentResponse(
            variable_updates={"good_key": 1, "bad_key": object()},
            queue_pushes={"q": ["item"]},
            events=[Event(name="e1", payload={})],
        ),
    )
    listener = subscriber("listener", "e1")
    board = Blackboard(variables={"before": True})
    before = board.as_dict()
    response = await engine_with(bad, listener).process_turn(make_context(board=board))
    after = board.as_dict()
    for key in ("queues", "facts", "memory", "events"):
        assert after[key] == before[key]
    assert "good_key" not in after["variables"]
    assert listener.calls == []
    assert response.insights[0].type == InsightType.ERROR
    assert "JSON" in response.insights[0].content


async def test_agent_writing_to_its_snapshot_fails_without_touching_the_board() -> None:
    def writes(ctx: AgentContext) -> AgentResponse:
        assert ctx.blackboard is not None
        ctx.blackboard.set_var("direct", 1)
        return AgentResponse()

    board = Blackboard()
    response = await engine_with(ScriptAgent("direct", response=writes)).process_turn(
        make_context(board=board)
    )
    assert "ReadOnlyBlackboardError" in response.insights[0].content
    assert not board.has_var("direct")


async def test_agent_timeout_becomes_an_error_insight() -> None:
    slow = ScriptAgent("slow", delay=60, timeout=0.05)
    fast = ScriptAgent("fast", response=AgentResponse(variable_updates={"fast": 1}))
    default_limited = ScriptAgent("limited", delay=60)
    engine = engine_with(slow, fast, default_limited, agent_timeout=0.1)
    started = time.perf_counter()
    response = await engine.process_turn(make_context())
    assert time.perf_counter() - started < 20  # it did not wait the agents' 60 s
    errors = {i.agent_id: i.content for i in response.insights}
    assert set(errors) == {"slow", "limited"}
    assert "timed out after 0.05s" in errors["slow"]
    assert "timed out after 0.1s" in errors["limited"]
    assert response.variable_updates == {"fast": 1}


async def test_evaluate_returning_none_contributes_nothing() -> None:
    class Quiet(ScriptAgent):
        async def evaluate(self, context: AgentContext) -> AgentResponse | None:
            return None

    response = await engine_with(Quiet("quiet")).process_turn(make_context())
    assert response.insights == []


async def test_failing_callback_does_not_break_the_turn() -> None:
    class Broken(AgentCallbackHandler):
        async def on_agent_start(self, agent_name: str, context: AgentContext) -> None:
            raise RuntimeError("observer bug")

    agent = ScriptAgent("a", response=AgentResponse(variable_updates={"x": 1}))
    response = await engine_with(agent, callbacks=[Broken()]).process_turn(make_context())
    assert response.variable_updates == {"x": 1}


async def test_concurrent_turns_on_one_board_lose_nothing() -> None:
    agent = ScriptAgent(
        "pusher", response=lambda ctx: AgentResponse(queue_pushes={"q": [ctx.turn_count]})
    )
    board = Blackboard()
    engine = engine_with(agent)
    await asyncio.gather(
        *(engine.process_turn(make_context(board=board, turn_count=i)) for i in range(50))
    )
    assert sorted(board.queues["q"]) == list(range(50))


# ------------------------------------------------------------------- v1 compat


async def test_v1_state_updates_and_memory_keys_are_mapped() -> None:
    legacy = ScriptAgent(
        "legacy",
        response=AgentResponse(
            state_updates={"phase": "closing", "memory_legacy": {"count": 2}, "memory_x": 1}
        ),
    )
    board = Blackboard()
    response = await engine_with(legacy).process_turn(make_context(board=board))
    assert board.get_var("phase") == "closing"
    assert board.get_memory("legacy") == {"count": 2}
    assert not board.has_var("memory_legacy")
    assert board.get_var("memory_x") == 1  # not this agent's memory: a plain variable
    assert response.state_updates["phase"] == "closing"


async def test_v2_variable_updates_win_over_v1_state_updates() -> None:
    both = ScriptAgent(
        "both",
        response=AgentResponse(state_updates={"k": "v1"}, variable_updates={"k": "v2"}),
    )
    board = Blackboard()
    await engine_with(both).process_turn(make_context(board=board))
    assert board.get_var("k") == "v2"


async def test_v1_shared_state_maps_to_blackboard_variables() -> None:
    def reads(ctx: AgentContext) -> AgentResponse:
        return AgentResponse(
            state_updates={
                "seen": ctx.shared_state.get("legacy"),
                "mem": ctx.shared_state.get("memory_reader"),
            }
        )

    context = AgentContext(session_id="s", recent_segments=[], shared_state={"legacy": 1})
    engine = engine_with(ScriptAgent("reader", response=reads))
    await engine.process_turn(context)
    assert context.blackboard is not None  # created by the engine
    assert context.blackboard.get_var("legacy") == 1
    assert context.shared_state["seen"] == 1  # host's shared_state refreshed
    context.blackboard.update_memory("reader", {"n": 1})
    await engine.process_turn(context)
    assert context.blackboard.get_var("mem") == {"n": 1}


# -------------------------------------------------------------- event bus


async def test_engine_activity_is_published_as_deskwork_events() -> None:
    bus = EventBus()
    events: list[BusEvent] = []
    bus.subscribe("*", events.append)
    engine = engine_with(
        emitter("a", "e1"),
        subscriber("b", "e1"),
        ScriptAgent("broken", error=ValueError("bad")),
        ScriptAgent("cooling", cooldown=60),
        event_bus=bus,
    )
    await engine.process_turn(make_context())
    events.clear()
    await engine.process_turn(make_context())
    types = [e.type for e in events]
    assert types[0] == RealtimeEventType.TURN_STARTED
    assert types[-1] == RealtimeEventType.TURN_COMPLETED
    assert all(t.startswith("realtime.") for t in types)
    turn_ids = {e.run_id for e in events}
    assert len(turn_ids) == 1
    by_type = {e.type: e for e in events}
    assert by_type[RealtimeEventType.AGENT_FAILED].payload["error"] == "ValueError: bad"
    assert by_type[RealtimeEventType.AGENT_SKIPPED].payload["reason"] == "cooldown"
    completed = [e for e in events if e.type == RealtimeEventType.AGENT_COMPLETED]
    assert {e.source for e in completed} == {"a", "b"}
    assert all(e.payload["session_id"] == "session-1" for e in events)
    assert types.count(RealtimeEventType.PHASE_STARTED) == 2
    assert types.count(RealtimeEventType.PHASE_COMPLETED) == 2


async def test_engine_uses_the_desks_bus_and_adapter() -> None:
    adapter = ScriptedAdapter()
    desk = Desk(adapter=adapter)
    seen: list[str] = []
    desk.event_bus.subscribe(RealtimeEventType.TURN_COMPLETED, lambda e: seen.append(e.type))
    engine = AgentEngine(desk=desk)
    engine.register_agent(ScriptAgent("a"))
    await engine.process_turn(make_context())
    assert seen == ["realtime.turn.completed"]
    assert engine.get_adapter() is adapter


def test_event_type_constants() -> None:
    assert {t.value for t in RealtimeEventType} >= {
        "realtime.turn.started",
        "realtime.agent.completed",
        "realtime.agent.failed",
        "realtime.turn.completed",
    }


async def test_callbacks_see_the_whole_turn() -> None:
    recorder = Recorder()
    engine = engine_with(
        ScriptAgent("a", response=AgentResponse(events=[Event(name="e", payload={})])),
        subscriber("b", "e"),
        callbacks=[recorder],
    )
    await engine.process_turn(make_context())
    assert [name for name, _ in recorder.calls] == [
        "turn_start",
        "phase_start",
        "agent_start",
        "agent_finish",
        "phase_end",
        "phase_start",
        "agent_start",
        "agent_finish",
        "phase_end",
        "turn_end",
    ]
    assert recorder.names("phase_end") == [(1, ["e"]), (2, [])]


def _count(ctx: AgentContext) -> AgentResponse:
    assert ctx.blackboard is not None
    n = ctx.blackboard.get_memory("counter").get("n", 0) + 1
    return AgentResponse(
        memory_updates={"n": n, "done": n >= 3},
        facts=[Fact(type="stage", value=f"turn-{ctx.turn_count}")],
    )


async def test_a_sessions_board_survives_a_restart() -> None:
    conditions = {"rules": [{"memory": "done", "op": "not_exists"}]}
    board = Blackboard()
    first = engine_with(ScriptAgent("counter", response=_count, trigger_conditions=conditions))
    for turn in (1, 2):
        await first.process_turn(make_context(board=board, turn_count=turn))
    saved = json.dumps(board.to_state())

    restored = Blackboard.from_state(json.loads(saved))  # a new process
    fresh = ScriptAgent("counter", response=_count, trigger_conditions=conditions)
    second = engine_with(fresh)
    for turn in (3, 4):
        await second.process_turn(make_context(board=restored, turn_count=turn))
    assert restored.get_memory("counter") == {"n": 3, "done": True}
    assert len(fresh.calls) == 1  # the condition stopped turn 4
    assert [f.value for f in restored.facts] == ["turn-3"]
