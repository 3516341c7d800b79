"""Unregistering a worker or workforce stops its paused runs from resuming by id alone."""

from __future__ import annotations

import pytest

from deskwork import Desk, Job, Worker, Workforce
from deskwork.exceptions import RunnerNotRegisteredError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply, structured
from deskwork.tools import tool


@tool(requires_confirmation=True)
def send() -> str:
    """Needs a person's approval."""
    return "sent"


def _desk(*first: Turn) -> Desk:
    adapter = ScriptedAdapter([*first, call_tool("send"), reply("done")])
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())


def test_resume_after_unregister_worker_fails_clearly() -> None:
    desk = _desk()
    worker = Worker(name="mailer", tools=[send])
    paused = desk.run(worker, Job(input="go"))
    assert paused.status == "paused"
    desk.unregister_worker(worker)
    with pytest.raises(RunnerNotRegisteredError, match=r"'mailer'.*not registered"):
        desk.resume(paused.run_id, True)
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"  # still resumable
    assert desk.resume(paused.run_id, True, runner=worker).status == "completed"


def test_resume_after_unregister_workforce_fails_clearly() -> None:
    desk = _desk(structured({"worker": "mailer"}))  # the manager picks the member
    team = Workforce([Worker(name="mailer", tools=[send])], name="team")
    paused = desk.run(team, Job(input="go"))
    assert paused.status == "paused"
    desk.unregister_workforce(team)
    with pytest.raises(RunnerNotRegisteredError, match=r"'team'.*not registered"):
        desk.resume(paused.run_id, True)
    desk.register_workforce(team)
    assert desk.resume(paused.run_id, True).status == "completed"


def test_registering_again_makes_the_run_resumable_by_id() -> None:
    desk = _desk()
    worker = Worker(name="mailer", tools=[send])
    paused = desk.run(worker, Job(input="go"))
    desk.unregister_worker(worker)
    desk.register_worker(Worker(name="mailer", tools=[send]))
    assert desk.resume(paused.run_id, True).status == "completed"
