"""``deskwork runs fail RUN_ID`` of a durable run still queued (no worker started it, so it
has no record yet) ends it failed and cancels its workflow, as ``desk.cancel`` does. It said
'unknown run' and left the run queued: the next worker to serve the queue ran it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.cli import main
from deskwork.testing import ScriptedAdapter, reply


def test_runs_fail_ends_a_queued_durable_run_before_any_worker_starts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESKWORK_QUEUES", "")  # this process serves no queue: it stays queued
    submitter = Desk(model="m", adapter=ScriptedAdapter([]), durable=True)
    run_id = submitter.submit(Worker(name="w"), "hello", run_id="queued-1")
    submitter.close()

    assert main(["runs", "fail", run_id]) == 0
    assert "is now failed" in capsys.readouterr().out

    monkeypatch.delenv("DESKWORK_QUEUES")  # a process that serves every queue
    adapter = ScriptedAdapter([reply("ran anyway")])
    worker = Desk(model="m", adapter=adapter, durable=True)
    try:
        worker.register(Worker(name="w"))
        worker.recover()  # DBOS started: it serves the queue now
        time.sleep(1.5)
        record = worker.run_store.get_run(run_id)
        assert record is not None and record.status == "failed"
        assert adapter.calls == []
        events = worker.run_store.get_events(run_id)
        assert [e.type for e in events] == ["run.failed"]
    finally:
        worker.close()
