"""A realtime turn run through the Desk: a run record, stored events, the board in state."""

from __future__ import annotations

from pathlib import Path

from rt_support import ScriptAgent

from deskwork import Desk, Job
from deskwork.realtime import (
    AgentContext,
    AgentEngine,
    AgentInsight,
    AgentResponse,
    Blackboard,
    InsightType,
)
from deskwork.testing import ScriptedAdapter


def _agent() -> ScriptAgent:
    return ScriptAgent(
        "coach",
        response=AgentResponse(
            insights=[
                AgentInsight(
                    agent_id="coach",
                    agent_name="Coach",
                    type=InsightType.SUGGESTION,
                    content="Ask about budget",
                )
            ],
            variable_updates={"phase": "discovery"},
        ),
    )


async def test_a_turn_is_a_stored_desk_run(tmp_path: Path) -> None:
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter(), storage_dir=tmp_path)
    engine = AgentEngine(adapter=ScriptedAdapter(), desk=desk)
    engine.register_agent(_agent())
    context = AgentContext(session_id="s1", recent_segments=[], blackboard=Blackboard())

    report = await desk.arun(engine.turn(context), Job(input="We need a quote."))

    assert report.status == "completed", report.errors
    assert isinstance(report.data, AgentResponse)
    assert report.content == "Ask about budget"
    stored = desk.run_store.get_events(report.run_id)
    types = [e.type for e in stored]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    realtime = [t for t in types if t.startswith("realtime.")]
    assert realtime[0] == "realtime.turn.started" and realtime[-1] == "realtime.turn.completed"
    assert {e.run_id for e in stored} == {report.run_id}
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.state is not None
    assert record.state.runner_type == "realtime"
    board = Blackboard.from_state(record.state.payload["blackboard"])  # survives a restart
    assert board.get_var("phase") == "discovery"


async def test_a_turn_cannot_be_resumed(tmp_path: Path) -> None:
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter(), storage_dir=tmp_path)
    engine = AgentEngine(adapter=ScriptedAdapter(), desk=desk)
    engine.register_agent(_agent())
    context = AgentContext(session_id="s1", recent_segments=[], blackboard=Blackboard())
    report = await desk.arun(engine.turn(context), Job(input="hi"))
    again = await desk.aresume(report, True)
    assert again.status == "failed"
    assert "not paused" in again.errors[0]
