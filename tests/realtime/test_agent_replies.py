"""What an agent returns is checked before it reaches the board or the turn's result.

An agent that returns something other than an ``AgentResponse``, or a response it changed
into one that does not validate, fails alone (its ``error`` insight and a
``realtime.agent.failed`` event) and the other agents of the phase are kept. Before, a
returned string failed with "'str' object has no attribute 'state_updates'", an empty
string passed as an empty response, and an appended non-insight or a fact with a NaN
confidence made ``process_turn`` itself raise, after part of the phase was merged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rt_support import Recorder, ScriptAgent, make_context

from deskwork import Desk, Job
from deskwork.core.event import Event as BusEvent
from deskwork.event_bus import EventBus
from deskwork.realtime import (
    AgentContext,
    AgentEngine,
    AgentResponse,
    Blackboard,
    Event,
    Fact,
    InsightType,
    RealtimeEventType,
)
from deskwork.testing import ScriptedAdapter


class Returns(ScriptAgent):
    """An agent whose ``evaluate`` returns ``value`` (built anew per call when callable)."""

    def __init__(self, agent_id: str, value: Any) -> None:
        super().__init__(agent_id)
        self.value = value

    async def evaluate(self, context: AgentContext) -> Any:
        return self.value() if callable(self.value) else self.value


def good_agent() -> ScriptAgent:
    response = AgentResponse(
        variable_updates={"good": 1}, facts=[Fact(type="budget", value=10)], events=[]
    )
    return ScriptAgent("good", response=response)


async def run_with(bad: ScriptAgent) -> tuple[AgentResponse, list[BusEvent], AgentContext]:
    bus = EventBus()
    seen: list[BusEvent] = []
    bus.subscribe("*", seen.append)
    engine = AgentEngine(adapter=ScriptedAdapter(), event_bus=bus)
    engine.register_agent(bad)
    engine.register_agent(good_agent())
    context = make_context()
    response = await engine.process_turn(context)
    return response, seen, context


def with_appended_text() -> AgentResponse:
    response = AgentResponse()
    response.insights.append("not an insight")  # type: ignore[arg-type]
    return response


def with_nan_confidence() -> AgentResponse:
    fact = Fact(type="budget", key="other", value=5)
    fact.confidence = float("nan")
    return AgentResponse(facts=[fact], variable_updates={"bad": 1})


def with_nan_timestamp() -> AgentResponse:
    return AgentResponse(events=[Event(name="e", timestamp=float("nan"))])


def with_event_as_text() -> AgentResponse:
    response = AgentResponse()
    response.events.append("question_detected")  # type: ignore[arg-type]
    return response


def with_variables_replaced() -> AgentResponse:
    response = AgentResponse()
    response.variable_updates = ["bad"]  # type: ignore[assignment]
    return response


def with_number_key() -> AgentResponse:
    response = AgentResponse(variable_updates={"bad": 1})
    response.variable_updates[5] = 1  # type: ignore[index]
    return response


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        ("advice", "returned str, not an AgentResponse"),
        ("", "returned str, not an AgentResponse"),
        ({"insights": []}, "returned dict, not an AgentResponse"),
        (with_appended_text, "insights.0"),
        (with_event_as_text, "events.0"),
        (with_variables_replaced, "variable_updates"),
        (with_number_key, "variable_updates.5"),
        (with_nan_confidence, "not JSON-serializable"),
        (with_nan_timestamp, "not JSON-serializable"),
    ],
)
async def test_an_unusable_reply_fails_its_agent_only(value: Any, cause: str) -> None:
    response, seen, context = await run_with(Returns("bad", value))
    errors = [i for i in response.insights if i.type == InsightType.ERROR]
    assert [i.agent_id for i in errors] == ["bad"]
    assert cause in errors[0].content
    assert response.debug_info["phases"][0]["agents_failed"] == ["bad"]
    failed = [e for e in seen if e.type == RealtimeEventType.AGENT_FAILED]
    assert [e.payload["agent_id"] for e in failed] == ["bad"]
    assert seen[-1].type == RealtimeEventType.TURN_COMPLETED
    board = context.blackboard
    assert board is not None
    assert board.variables.get("good") == 1 and "bad" not in board.variables
    assert [(f.type, f.key) for f in board.facts] == [("budget", None)]
    assert board.count_events() == 0


async def test_none_still_means_nothing_to_say() -> None:
    response, _, _ = await run_with(Returns("quiet", None))
    assert response.insights == []
    assert response.debug_info["phases"][0]["agents_run"] == ["quiet", "good"]


@pytest.mark.parametrize(
    "reply",
    [
        AgentResponse(variable_updates={"note \ud83d": "a cut emoji in a name"}),
        AgentResponse(variable_updates={"note": {"by \ud83d": 1}}),
        AgentResponse(memory_updates={"k\udc00": 1}),
        AgentResponse(queue_pushes={"q\ud800": [1]}),
    ],
)
async def test_a_lone_surrogate_in_a_key_fails_its_agent_not_the_session(
    reply: AgentResponse, tmp_path: Path
) -> None:
    """A lone surrogate (a model's JSON can hold ``"\\ud83d"``, half an emoji) in a name or
    a key cannot be saved (values can): before, it reached the board, and that desk run and
    every later one of the session failed with ``UnicodeEncodeError`` when the board was
    saved, as did ``board.save_to``."""
    desk = Desk(adapter=ScriptedAdapter(), storage_dir=tmp_path)
    engine = AgentEngine(desk=desk)
    engine.register_agent(ScriptAgent("bad", response=reply))
    engine.register_agent(good_agent())
    context = make_context()
    for _ in range(2):
        report = await desk.arun(engine.turn(context), Job(input="turn"))
        assert report.status == "completed", report.errors
        assert isinstance(report.data, AgentResponse)
        [error] = [i for i in report.data.insights if i.type == InsightType.ERROR]
        assert error.agent_id == "bad" and "lone surrogate" in error.content
    board = context.blackboard
    assert board is not None and board.get_var("good") == 1
    board.save_to(desk.session_store, "s1")
    assert Blackboard.load_from(desk.session_store, "s1") is not None


class UnreadableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


async def test_an_exception_whose_message_cannot_be_read_fails_its_agent_only() -> None:
    """Before, describing the error raised again, out of the engine: the whole turn failed
    and the other agents' updates of the phase were never merged."""
    response, seen, context = await run_with(ScriptAgent("bad", error=UnreadableError()))
    [error] = [i for i in response.insights if i.type == InsightType.ERROR]
    assert "UnreadableError: <the UnreadableError's message could not be read>" in error.content
    assert seen[-1].type == RealtimeEventType.TURN_COMPLETED
    assert context.blackboard is not None and context.blackboard.get_var("good") == 1


async def test_an_agent_response_subclass_keeps_its_type_and_fields() -> None:
    """The re-validation of f552727 rebuilt every reply as a plain AgentResponse, so a
    subclass's own fields no longer reached on_agent_finish."""

    class Scored(AgentResponse):
        score: int = 0

    class Seen(Recorder):
        async def on_agent_finish(
            self, agent_name: str, response: AgentResponse | None, duration: float
        ) -> None:
            self.calls.append(("finish", response))

    seen = Seen()
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[seen])
    engine.register_agent(ScriptAgent("a", response=Scored(score=3)))
    await engine.process_turn(make_context())
    [(_, finished)] = [c for c in seen.calls if c[0] == "finish"]
    assert isinstance(finished, Scored) and finished.score == 3
