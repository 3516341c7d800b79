"""StructuredLogTracer: JSON logs and per-turn traces."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.exceptions import ConfigurationError
from deskwork.logging import get_logger
from deskwork.realtime import AgentEngine, AgentResponse, Event, TriggerType, current_turn_id
from deskwork.realtime.utils.tracing import StructuredLogTracer
from deskwork.testing import ScriptedAdapter


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]


@pytest.fixture
def tracer() -> Iterator[tuple[StructuredLogTracer, ListHandler]]:
    logger = get_logger("deskwork.realtime.test_trace", logging.DEBUG)
    handler = ListHandler()
    logger.logger.addHandler(handler)
    yield StructuredLogTracer(logger), handler
    logger.logger.removeHandler(handler)


async def test_tracer_logs_json_lines_and_builds_a_trace(
    tracer: tuple[StructuredLogTracer, ListHandler],
) -> None:
    trace_handler, handler = tracer
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[trace_handler])
    engine.register_agent(
        ScriptAgent(
            "extractor",
            response=AgentResponse(
                events=[Event(name="question_detected", payload={"q": "price?"})],
                variable_updates={"questions": 1},
            ),
        )
    )
    engine.register_agent(
        ScriptAgent(
            "responder", trigger_types=[TriggerType.EVENT], subscribed_events=["question_detected"]
        )
    )
    engine.register_agent(ScriptAgent("broken", error=RuntimeError("api_key=sk-secretsecret123")))
    engine.register_agent(
        ScriptAgent("gated", trigger_conditions={"rules": [{"var": "x", "op": "exists"}]})
    )
    await engine.process_turn(make_context())
    records = handler.records()
    messages = [r["message"] for r in records]
    assert messages[0] == "realtime.turn.started"
    assert messages[-1] == "realtime.turn.completed"
    assert {
        "realtime.phase.started",
        "realtime.agent.started",
        "realtime.agent.completed",
        "realtime.agent.failed",
        "realtime.agent.skipped",
    } <= set(messages)
    assert len({r["turn_id"] for r in records if "turn_id" in r}) == 1
    assert "sk-secretsecret123" not in "\n".join(handler.lines)

    trace = trace_handler.last_trace
    assert trace is not None
    assert trace["session_id"] == "session-1"
    assert trace["agents_skipped"] == [{"agent": "Gated", "reason": "conditions_not_met"}]
    phase1, phase2 = trace["phases"]
    assert [a["agent"] for a in phase1["agents_run"]] == ["Extractor"]
    assert phase1["agents_run"][0]["events_emitted"] == [
        {"name": "question_detected", "payload": {"q": "price?"}}
    ]
    assert [a["agent"] for a in phase1["agents_failed"]] == ["Broken"]
    assert phase1["events_collected"] == ["question_detected"]
    assert [a["agent"] for a in phase2["agents_run"]] == ["Responder"]
    assert trace["response"]["events_emitted_total"] == 1


async def test_tracer_keeps_concurrent_turns_apart(
    tracer: tuple[StructuredLogTracer, ListHandler],
) -> None:
    trace_handler, _ = tracer
    seen_turns: list[str | None] = []

    def respond(ctx: Any) -> AgentResponse:
        seen_turns.append(current_turn_id())
        return AgentResponse()

    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[trace_handler])
    engine.register_agent(ScriptAgent("slow", delay=0.05, response=respond))
    await asyncio.gather(*(engine.process_turn(make_context(session_id=f"s{i}")) for i in range(3)))
    traces = list(trace_handler.traces)
    assert sorted(t["session_id"] for t in traces) == ["s0", "s1", "s2"]
    assert all(len(t["phases"][0]["agents_run"]) == 1 for t in traces)
    assert sorted(seen_turns) == sorted(t["turn_id"] for t in traces)  # type: ignore[type-var]
    assert current_turn_id() is None


async def test_tracer_keeps_no_secret_in_its_traces(
    tracer: tuple[StructuredLogTracer, ListHandler],
) -> None:
    trace_handler, _ = tracer
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[trace_handler])
    engine.register_agent(ScriptAgent("broken", error=RuntimeError("api_key=sk-secretsecret123")))
    await engine.process_turn(make_context())
    trace = trace_handler.last_trace
    assert trace is not None
    [failed] = trace["phases"][0]["agents_failed"]
    assert failed["error"].startswith("RuntimeError: ")
    assert "sk-secretsecret123" not in json.dumps(list(trace_handler.traces))


async def test_kept_traces_are_redacted_like_the_logs() -> None:
    """Before, only the error texts of a kept trace were redacted: trigger metadata and an
    event payload naming a secret were handed out as is by ``traces`` / ``last_trace``."""
    secret = "sk-abcdefghijklmnopqrstuvwx"
    tracer = StructuredLogTracer(name="deskwork.realtime.test_trace_redaction")
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[tracer])
    engine.register_agent(
        ScriptAgent(
            "emitter",
            response=AgentResponse(
                events=[Event(name="e", payload={"authorization": f"Bearer {secret}"})]
            ),
        )
    )
    await engine.process_turn(make_context(), trigger_metadata={"api_key": secret})
    trace = tracer.last_trace
    assert trace is not None
    assert secret not in json.dumps(trace)
    assert trace["trigger"]["metadata"]["api_key"] == "<redacted>"
    assert trace["phases"][0]["agents_run"][0]["events_emitted"][0]["name"] == "e"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"logger": logging.getLogger("x")}, "logger must be a StructuredLogger .* got Logger"),
        ({"max_traces": -1}, "max_traces must be an integer >= 0"),
        ({"max_traces": None}, "max_traces must be an integer >= 0"),
    ],
)
def test_tracer_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    """Before: a stdlib logger failed every hook (logged, per step, per turn), max_traces=-1
    raised deque's 'maxlen must be non-negative' and None kept every trace for good."""
    with pytest.raises(ConfigurationError, match=message):
        StructuredLogTracer(**kwargs)


async def test_a_tracer_keeping_no_trace_still_logs_each_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``max_traces=0`` logs only. Before, each turn's end logged an IndexError traceback
    ("realtime callback StructuredLogTracer.on_turn_end failed") instead of the turn."""
    logger = get_logger("deskwork.realtime.test_trace_none_kept", logging.DEBUG)
    handler = ListHandler()
    logger.logger.addHandler(handler)
    try:
        tracer = StructuredLogTracer(logger, max_traces=0)
        engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[tracer])
        engine.register_agent(ScriptAgent("coach"))
        with caplog.at_level(logging.WARNING):
            await engine.process_turn(make_context())
    finally:
        logger.logger.removeHandler(handler)
    [done] = [r for r in handler.records() if r["message"] == "realtime.turn.completed"]
    assert done["trace"]["phases"][0]["agents_run"][0]["agent"] == "Coach"
    assert not tracer.traces and tracer.last_trace is None
    assert "failed" not in caplog.text
