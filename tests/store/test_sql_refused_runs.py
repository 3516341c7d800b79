"""The SQL stores' note of runs whose later-committed events were refused stays bounded.

A run ended by another process while this one runs it: its events added in a loop are
committed later, found refused, and noted so that the run's next write raises
:class:`RunNotRunningError`. When that next write is the run's own ``finish_run``, refused
itself, the run has been told and writes no more: nothing of it may stay noted (or pending)
for the life of the store, one entry per cancelled run.
"""

from __future__ import annotations

import asyncio

import pytest

from deskwork import Event
from deskwork.store import RunNotRunningError, RunStore
from deskwork.store._url import open_run_store
from deskwork.utils import new_id, utc_now

pytestmark = pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)


def _event(run_id: str, kind: str = "custom.step") -> Event:
    return Event(
        event_id=new_id(), type=kind, timestamp=utc_now(), run_id=run_id, source="s", payload={}
    )


def _ended_elsewhere(store: RunStore, other: RunStore, run_id: str) -> None:
    """``run_id`` started by ``store`` and failed by ``other`` (a cancel in another process)."""
    store.begin_run(run_id, None, runner="w")
    store.flush()
    other.finish_run(run_id, "failed", None, None, None, _event(run_id, "run.failed"))


def _noted(store: RunStore) -> set[str]:
    """The runs ``store`` keeps noted as refused (its private set)."""
    noted: set[str] = vars(store)["_refused_runs"]
    return noted


async def _step_then_finish(store: RunStore, run_id: str) -> None:
    """A run's last step: an event committed later (inside a loop), then its own end."""
    store.add_event(_event(run_id))
    store.finish_run(run_id, "completed", "done", None, None, _event(run_id, "run.completed"))


def test_runs_refused_at_their_end_leave_no_note_and_others_are_still_told(
    database_url: str,
) -> None:
    store, other = open_run_store(database_url), open_run_store(database_url)
    try:
        _ended_elsewhere(store, other, "waiting")

        async def refused_later() -> None:  # noted; its next write comes after the others
            store.add_event(_event("waiting"))
            await asyncio.to_thread(store.flush)

        asyncio.run(refused_later())
        for n in range(30):
            _ended_elsewhere(store, other, f"r{n}")
            with pytest.raises(RunNotRunningError):
                asyncio.run(_step_then_finish(store, f"r{n}"))
        store.flush()
        assert _noted(store) == {"waiting"}  # grew by one per run before
        assert [e.type for e in store.get_events("r29")] == ["run.failed"]
        with pytest.raises(RunNotRunningError):  # the note kept still tells its run, once
            store.add_event(_event("waiting"))
        assert not _noted(store)
    finally:
        store.close()
        other.close()
