"""A run whose record another process ended while it ran (``deskwork runs fail --force``,
a second desk on the same database) stops storing, and ``desk.run`` still returns a report.

Since the stores refuse a run's writes once its record is not ``running`` (f54969c), the
desk's emitter stops such a run with ``asyncio.CancelledError``; the desk turns that into
a ``failed`` report, as it does every other run failure, and does not raise it from
``desk.run``/``desk.arun`` (the caller's task was not cancelled). The report's events are
the stored ones: the other process's end last, none the store refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Job, Report, Worker
from deskwork.core.event import EventType, new_event
from deskwork.store import InMemoryRunStore, RunStore, SQLiteRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def _ended_elsewhere(store: RunStore, run_id: str) -> None:
    end = new_event(run_id, EventType.RUN_FAILED, "deskwork runs fail", {"errors": ["gone"]})
    store.finish_run(run_id, "failed", None, None, None, end)


def _desk_and_worker(store: RunStore, other: RunStore) -> tuple[Desk, Worker, list[str]]:
    run_ids: list[str] = []

    @tool()
    def slow_step() -> str:
        _ended_elsewhere(other, run_ids[0])  # while this tool runs, another process ends it
        return "done"

    adapter = ScriptedAdapter([call_tool("slow_step"), reply("finished")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    worker = Worker(name="w", tools=[slow_step])
    return desk, worker, run_ids


def _stores(kind: str, tmp_path: Path) -> tuple[RunStore, RunStore]:
    if kind == "memory":
        store = InMemoryRunStore()
        return store, store
    return SQLiteRunStore(tmp_path / "runs.db"), SQLiteRunStore(tmp_path / "runs.db")


def _assert_kept_external_end(store: RunStore, report: Report) -> None:
    assert report.status == "failed"
    assert report.errors == [f"run {report.run_id} was ended elsewhere (stored status: failed)"]
    record = store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
    stored = store.get_events(report.run_id)
    types = [event.type for event in stored]
    assert types[-1] == EventType.RUN_FAILED  # nothing stored after the other process's end
    assert types.count(EventType.RUN_FAILED) == 1
    # the report tells what the store holds: the other process's end, no event it refused
    assert [e.event_id for e in report.events] == [e.event_id for e in stored]
    assert report.events[-1].source == "deskwork runs fail"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_desk_run_returns_a_failed_report(kind: str, tmp_path: Path) -> None:
    store, other = _stores(kind, tmp_path)
    desk, worker, run_ids = _desk_and_worker(store, other)
    report = desk.run(worker, Job(input="go"), on_event=lambda e: run_ids.append(e.run_id))
    _assert_kept_external_end(store, report)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_desk_arun_returns_a_failed_report(kind: str, tmp_path: Path) -> None:
    store, other = _stores(kind, tmp_path)
    desk, worker, run_ids = _desk_and_worker(store, other)
    report = await desk.arun(worker, Job(input="go"), on_event=lambda e: run_ids.append(e.run_id))
    _assert_kept_external_end(store, report)


def test_a_durable_desk_returns_the_same_failed_report(tmp_path: Path) -> None:
    """A durable run (a DBOS workflow) ended in its store by another process ends its
    workflow with the same report, instead of leaving it pending for recovery."""
    pytest.importorskip("dbos", reason="durable runs need the dbos extra")
    run_ids: list[str] = []

    @tool()
    def slow_step() -> str:
        _ended_elsewhere(SQLiteRunStore(tmp_path / "deskwork.db"), run_ids[0])
        return "done"

    adapter = ScriptedAdapter([call_tool("slow_step"), reply("finished")])
    desk = Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        worker = Worker(name="w", tools=[slow_step])
        report = desk.run(worker, Job(input="go"), on_event=lambda e: run_ids.append(e.run_id))
        assert isinstance(desk.run_store, SQLiteRunStore)
        assert desk.run_store.path == tmp_path / "deskwork.db"
        _assert_kept_external_end(desk.run_store, report)
    finally:
        desk.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_report_does_not_depend_on_the_desks_bounded_memory(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The desk remembers at most LIVE_CACHE_LIMIT ended runs; a run pushed out of that
    memory while its refusal unwinds (1,024 other runs ending meanwhile) still returns the
    failed report instead of raising CancelledError. A limit of 0 pushes every run out at
    once."""
    import deskwork.runtime.desk as desk_module

    monkeypatch.setattr(desk_module, "LIVE_CACHE_LIMIT", 0)
    store, other = _stores(kind, tmp_path)
    desk, worker, run_ids = _desk_and_worker(store, other)
    report = desk.run(worker, Job(input="go"), on_event=lambda e: run_ids.append(e.run_id))
    _assert_kept_external_end(store, report)
