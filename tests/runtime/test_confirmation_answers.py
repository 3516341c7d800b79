"""A confirmation is answered with True/False, a text, or a mapping's ``"approved"`` value;
any other answer is refused before the pause is claimed (the run stays paused).

``desk.resume(run_id, {"approved": False})`` ran the declined tool: every answer that was
neither None, a bool nor a text was read as its truth value.
"""

from __future__ import annotations

from typing import Any

import pytest

from approvalkit import paused_send
from deskwork import Desk, Job, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._tool_step import DECLINED
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.workflow import Step


@pytest.mark.parametrize("decision", [{"approved": False}, {"approved": "no"}, {"approved": None}])
def test_a_mapping_that_declines_never_runs_the_tool(decision: Any) -> None:
    desk, _, paused, sent = paused_send()
    report = desk.resume(paused, decision)
    assert report.status == "completed" and sent == []
    result = report.tool_calls[0].result
    assert result is not None and result.error == DECLINED


def test_a_mapping_that_approves_runs_the_tool() -> None:
    desk, _, paused, sent = paused_send()
    assert desk.resume(paused, {"approved": True, "note": "fine"}).status == "completed"
    assert sent == ["ann"]


@pytest.mark.parametrize("decision", [[False], 0, 1, 2.5, {}, {"ok": True}, object()])
def test_another_answer_is_refused_and_the_run_stays_paused(decision: Any) -> None:
    desk, _, paused, sent = paused_send()
    with pytest.raises(ConfigurationError, match="'approved' key"):
        desk.resume(paused, decision)
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused" and sent == []
    assert "run.resumed" not in [e.type for e in desk.run_store.get_events(paused.run_id)]
    assert desk.resume(paused, True).status == "completed"  # still resumable
    assert sent == ["ann"]


def test_a_flow_paused_inside_a_step_reads_the_mapping_too() -> None:
    ran: list[str] = []

    @tool(requires_confirmation=True)
    def restock(item: str) -> str:
        """Order more of an item."""
        ran.append(item)
        return f"Ordered more {item}."

    adapter = ScriptedAdapter([call_tool("restock", item="mugs"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    flow = desk.flow([Step(Worker(name="stock", tools=[restock]))], name="f")
    paused = desk.run(flow, Job(input="go"))
    assert paused.status == "paused"
    with pytest.raises(ConfigurationError):
        desk.resume(paused.run_id, [False], runner=flow)
    declined = desk.resume(paused.run_id, {"approved": False}, runner=flow)
    assert declined.status == "completed" and ran == []


def test_a_user_input_pause_takes_any_answer() -> None:
    @tool(requires_user_input=True)
    def ask(question: str) -> str:
        """Ask a person."""
        return question

    adapter = ScriptedAdapter([call_tool("ask", question="size?"), reply("ok")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    paused = desk.run(Worker(name="w", tools=[ask]), Job(input="go"))
    assert paused.status == "paused"
    assert desk.resume(paused, {"size": 3}).status == "completed"
