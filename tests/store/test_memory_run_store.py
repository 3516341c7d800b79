"""InMemoryRunStore stays bounded in a long-lived process (issue 12 item 9)."""

from __future__ import annotations

import pytest

from deskwork import Desk, Event, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.utils import new_id, utc_now


def _event(run_id: str) -> Event:
    return Event(
        event_id=new_id(), type="custom", timestamp=utc_now(), run_id=run_id, source="s", payload={}
    )


def test_oldest_finished_runs_are_dropped_first_with_their_events() -> None:
    store = InMemoryRunStore(max_runs=3)
    store.create_run("paused", None)
    store.update_run("paused", "paused", None, None, None)
    for run_id in ("old", "mid"):
        store.create_run(run_id, None)
        store.add_event(_event(run_id))
        store.update_run(run_id, "completed", "x", None, None)
    store.create_run("new", None)  # 4 runs > 3: "old" (finished longest ago) goes
    assert store.get_run("old") is None and store.get_events("old") == []
    assert {r.run_id for r in store.list_runs()} == {"paused", "mid", "new"}
    store.update_run("new", "failed", None, None, None)
    store.create_run("newest", None)
    assert store.get_run("mid") is None
    assert store.get_run("paused") is not None  # a paused run stays resumable


def test_unfinished_runs_are_never_dropped() -> None:
    store = InMemoryRunStore(max_runs=2)
    for n in range(4):
        store.create_run(f"r{n}", None)
    assert len(store.list_runs()) == 4


def test_a_long_lived_desk_keeps_a_bounded_number_of_runs() -> None:
    store = InMemoryRunStore(max_runs=5)
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("ok")] * 20), run_store=store)
    reports = [desk.run(Worker(name="w"), Job(input=f"job {n}")) for n in range(20)]
    assert all(r.status == "completed" for r in reports)
    kept = [r.run_id for r in store.list_runs(limit=100)]
    assert kept == [r.run_id for r in reversed(reports[-5:])]
    assert store.get_events(reports[0].run_id) == []


def test_max_runs_must_be_positive_or_none() -> None:
    with pytest.raises(ValueError, match="max_runs"):
        InMemoryRunStore(max_runs=0)
    unbounded = InMemoryRunStore(max_runs=None)
    for n in range(1500):
        unbounded.create_run(f"r{n}", None)
        unbounded.update_run(f"r{n}", "completed", None, None, None)
    assert len(unbounded.list_runs(limit=2000)) == 1500
    assert InMemoryRunStore().max_runs == 1000


def test_drops_happen_in_batches_and_never_exceed_the_bound() -> None:
    store = InMemoryRunStore(max_runs=20)
    sizes = []
    for n in range(100):
        store.create_run(f"r{n}", None)
        store.update_run(f"r{n}", "completed", None, None, None)
        sizes.append(len(store.list_runs(limit=1000)))
    assert max(sizes) == 20 and min(sizes[20:]) == 18  # 21 runs: drop 1 + a tenth of 20
    assert store.get_run("r99") is not None and store.get_run("r0") is None
