"""A durable resume's workflow claims the pause its resume checked, by action id: a resume that
checked pause 1 while another resume answered it (the run then paused at 2) claimed pause 2
with pause 1's answer and ran pause 1's call a second time."""

from __future__ import annotations

from pathlib import Path

from deskwork import Desk, Job, Worker
from deskwork._sync import run_sync
from deskwork.runtime import _durable
from deskwork.testing import ScriptedAdapter, call_tool
from deskwork.tools import tool

RAN: list[int] = []


@tool(requires_confirmation=True)
def act(n: int) -> str:
    """Act (asks first)."""
    RAN.append(n)
    return f"acted {n}"


def test_a_resume_workflow_does_not_claim_the_next_pause(tmp_path: Path) -> None:
    RAN.clear()
    turns = [call_tool("act", n=1), call_tool("act", n=2), "done"]
    desk = Desk(model="m", adapter=ScriptedAdapter(turns), storage_dir=tmp_path, durable=True)
    worker = Worker(name="actor", tools=[act])
    try:
        paused = desk.run(worker, Job(input="go"))
        assert paused.pending_action is not None
        checked = paused.pending_action.action_id  # what a second resume checked
        again = desk.resume(paused, True)  # the first resume: pause 1 answered, pause 2 now
        assert again.status == "paused" and again.pending_action is not None
        late = run_sync(
            _durable.aresume(desk, paused.run_id, True, worker, None, None, checked)
        )  # the second resume's workflow, started after the first one ended
        record = desk.run_store.get_run(paused.run_id)
    finally:
        desk.close()
    assert late.status == "failed" and "no longer paused" in late.errors[0]
    assert RAN == [1]
    assert record is not None and record.status == "paused" and record.state is not None
    assert record.state.pending_action == again.pending_action
