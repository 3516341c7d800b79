"""A cancel that arrives as the run completes leaves the run completed.

``desk.cancel`` (and a cancelled workflow's ``_end_run``) read the run's record, saw it
``running``, then wrote ``failed`` with ``update_run``: a run that completed between the two,
in this process or in another one, was turned ``failed`` (its output gone, two end events).
The end is one conditional write now. The race is made here by completing the run inside
the cancel's read of the record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from deskwork import Desk
from deskwork.core.event import Event, EventType, new_event
from deskwork.core.state import RunRecord
from deskwork.runtime import _durable
from deskwork.runtime.desk import _RunEnd
from deskwork.store import SQLiteRunStore
from deskwork.testing import ScriptedAdapter


class _RacedStore(SQLiteRunStore):
    """Runs ``then`` once, right after the next read of a run's record."""

    then: Callable[[], None] | None = None

    def get_run(self, run_id: str) -> RunRecord | None:
        record = super().get_run(run_id)
        then, self.then = self.then, None
        if then is not None:
            then()
        return record


def _completed_by_this_desk(desk: Desk) -> None:
    """The run's own end, as its runner stores it (``Desk._store_result``)."""
    end = _RunEnd("r", "completed", "done", None, None)
    desk._store_end(desk._emitter("r", [], None), "w", end, {})


def _completed_by_another_process(desk: Desk) -> None:
    """The run's end stored by the worker process that runs it (its own store)."""
    assert isinstance(desk.run_store, SQLiteRunStore)
    other = SQLiteRunStore(desk.run_store.path)
    end: Event = new_event("r", EventType.RUN_COMPLETED, "w", {})
    other.finish_run("r", "completed", "done", None, None, end)
    other.close()


@pytest.mark.parametrize(
    "complete",
    [_completed_by_this_desk, _completed_by_another_process],
    ids=["this process", "another process"],
)
def test_a_cancel_racing_the_runs_completion_leaves_it_completed(
    tmp_path: Path, complete: Callable[[Desk], None]
) -> None:
    store = _RacedStore(tmp_path / "runs.db")
    desk = Desk(model="m", adapter=ScriptedAdapter([]), run_store=store, storage_dir=tmp_path)
    try:
        store.begin_run("r", None, runner="w")
        store.then = lambda: complete(desk)  # completes once the cancel saw it running
        report = _durable._end_run(desk, "r", _durable.CANCELLED)
        record = store.get_run("r")
        assert record is not None and (record.status, record.output) == ("completed", "done")
        assert [e.type for e in store.get_events("r")] == ["run.completed"]
        assert (report.status, report.content) == ("completed", "done")
    finally:
        desk.close()


def test_a_cancel_of_a_running_run_ends_it_failed_once(tmp_path: Path) -> None:
    desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir=tmp_path)
    try:
        desk.run_store.begin_run("r", None, runner="w")
        report = _durable._end_run(desk, "r", _durable.CANCELLED)
        assert (report.status, report.errors) == ("failed", [_durable.CANCELLED])
        events = desk.run_store.get_events("r")
        assert [e.type for e in events] == ["run.failed"]
        assert events[0].payload == {"errors": [_durable.CANCELLED]}
        again = _durable._end_run(desk, "r", "a second cancel")
        assert again.errors == [_durable.CANCELLED]  # the first end stands, alone
        assert len(desk.run_store.get_events("r")) == 1
    finally:
        desk.close()
