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


def test_runs_fail_leaves_a_run_a_worker_finished_meanwhile_as_it_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker that dequeued the run before the cancel, and finished it, keeps its record:
    the failed one was written over it (the run's output was lost)."""
    import deskwork.cli.runs as runs_cli
    from deskwork.store._url import open_run_store

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".deskwork").mkdir()
    url = f"sqlite:///{tmp_path / '.deskwork' / 'deskwork.db'}"
    open_run_store(url).close()  # the desk's database, without the run: still queued

    def finished_meanwhile(url: str, run_id: str) -> bool:
        store = open_run_store(url)
        try:
            store.begin_run(run_id, None)
            store.update_run(run_id, "completed", "the worker's answer", None, None)
        finally:
            store.close()
        return True  # its workflow "cancelled": a no-op for a finished one

    monkeypatch.setattr(runs_cli, "_cancel_durable", finished_meanwhile)

    assert main(["runs", "fail", "raced-1"]) == 1
    assert "started meanwhile" in capsys.readouterr().err
    store = open_run_store(url)
    try:
        record = store.get_run("raced-1")
    finally:
        store.close()
    assert record is not None and record.status == "completed"
    assert record.output == "the worker's answer"
