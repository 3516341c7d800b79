"""A durable run has one end event: a run whose record ended without its event (the
process stopped between the two) gets the event when its workflow runs again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.runtime import _durable
from deskwork.testing import ScriptedAdapter, reply


def test_a_run_whose_record_ended_without_its_event_gets_one_end_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the workflow runs again, not for the first time (else it knows it has no record yet)
    monkeypatch.setattr(_durable, "first_execution", lambda _workflow_id: False)
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("never asked")]),
                storage_dir=tmp_path, durable=True)  # fmt: skip
    try:
        job = Job(input="hi")
        desk.run_store.begin_run("ended-1", job.to_state(), runner="w")
        desk.run_store.update_run("ended-1", "completed", "done", None, None)  # then stopped
        # its workflow runs again (desk.run refuses a used run id; recovery would not)
        report = asyncio.run(_durable.arun(desk, Worker(name="w"), job, "ended-1", None, None))
        assert (report.status, report.content) == ("completed", "done")
        ends = [e.type for e in desk.run_store.get_events("ended-1")]
        assert ends == ["run.completed"]
    finally:
        desk.close()
