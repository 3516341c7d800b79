"""A turn that does not complete still ends: cancelled or failing, observers are told.

Hosts cancel turns (a speaker barges in, a session closes). Before, a cancelled turn, or one
that raised, sent no terminal bus event and no callback, so the ``realtime.*`` log of the
turn stopped at ``agent.started`` and ``StructuredLogTracer`` kept the turn's trace in its
active set for good (memory that grew with every cancelled turn).
"""

from __future__ import annotations

import asyncio

import pytest
from rt_support import Recorder, ScriptAgent, make_context

from deskwork.core.event import Event as BusEvent
from deskwork.event_bus import EventBus
from deskwork.realtime import AgentContext, AgentEngine, AgentResponse, RealtimeEventType
from deskwork.realtime.utils.tracing import StructuredLogTracer
from deskwork.testing import ScriptedAdapter


class Hangs(ScriptAgent):
    def __init__(self, agent_id: str, started: asyncio.Event) -> None:
        super().__init__(agent_id)
        self.started = started

    async def evaluate(self, context: AgentContext) -> AgentResponse:
        self.started.set()
        await asyncio.sleep(60)
        return AgentResponse()


class EndRecorder(Recorder):
    async def on_turn_error(self, error: BaseException, duration: float) -> None:
        self.calls.append(("turn_error", type(error).__name__))


def observed_engine() -> tuple[AgentEngine, list[BusEvent], EndRecorder, StructuredLogTracer]:
    bus = EventBus()
    seen: list[BusEvent] = []
    bus.subscribe("*", seen.append)
    recorder, tracer = EndRecorder(), StructuredLogTracer()
    engine = AgentEngine(adapter=ScriptedAdapter(), event_bus=bus, callbacks=[recorder, tracer])
    return engine, seen, recorder, tracer


async def test_a_cancelled_turn_ends_with_turn_failed_and_the_error_hook() -> None:
    engine, seen, recorder, tracer = observed_engine()
    started = asyncio.Event()
    engine.register_agent(Hangs("slow", started))
    context = make_context()
    task = asyncio.create_task(engine.process_turn(context))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen[-1].type == RealtimeEventType.TURN_FAILED
    assert seen[-1].payload["cancelled"] is True
    assert seen[-1].payload["turn_id"] == seen[0].payload["turn_id"]
    assert recorder.calls[-1] == ("turn_error", "CancelledError")
    assert tracer._active == {}  # the trace is finished, not kept for good
    assert tracer.last_trace is not None and tracer.last_trace["error"] == "cancelled"


async def test_a_turn_that_raises_ends_with_turn_failed_naming_the_error() -> None:
    engine, seen, recorder, tracer = observed_engine()
    engine.register_agent(ScriptAgent("a"))

    def broken_merge(*args: object) -> None:
        raise RuntimeError("merge broke: api_key=sk-abcdefghijklmnop1234")

    engine._merge = broken_merge  # type: ignore[method-assign,assignment]
    with pytest.raises(RuntimeError, match="merge broke"):
        await engine.process_turn(make_context())
    end = seen[-1]
    assert end.type == RealtimeEventType.TURN_FAILED and end.payload["cancelled"] is False
    assert end.payload["error"].startswith("RuntimeError: merge broke")
    assert "sk-abcdefghijklmnop1234" not in str(end.payload)
    assert recorder.calls[-1] == ("turn_error", "RuntimeError")
    assert tracer._active == {}


async def test_a_completed_turn_sends_no_turn_failed() -> None:
    engine, seen, recorder, _ = observed_engine()
    engine.register_agent(ScriptAgent("a"))
    await engine.process_turn(make_context())
    assert seen[-1].type == RealtimeEventType.TURN_COMPLETED
    assert RealtimeEventType.TURN_FAILED not in {e.type for e in seen}
    assert "turn_error" not in {name for name, _ in recorder.calls}
