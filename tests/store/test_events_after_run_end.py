"""``add_event_after_end``: a custom event for a finished run (completed or failed) is kept
after the run's end event, on every store; a running, paused or unknown run's log takes
nothing through it, and ``add_event`` still refuses every event of a finished run."""

from __future__ import annotations

import asyncio

import pytest
from storekit import paused_state, sample_event

from deskwork import Event
from deskwork.store import RunNotRunningError, RunStore
from deskwork.store._blobs import MAX_STORED_CHARS
from deskwork.utils import new_id, utc_now


def _note(run_id: str, payload: dict[str, object] | None = None) -> Event:
    return Event(event_id=new_id(), type="custom.feedback", timestamp=utc_now(), run_id=run_id,
                 source="reviewer", payload=payload or {"score": 5})  # fmt: skip


def _ended(store: RunStore, run_id: str, status: str) -> list[str]:
    store.create_run(run_id, None)
    first = sample_event(run_id, 0)
    store.add_event(first)
    state = paused_state(run_id) if status == "paused" else None
    end = sample_event(run_id, 1).model_copy(update={"type": f"run.{status}"})
    store.finish_run(run_id, status, "out", None, state, end)  # type: ignore[arg-type]
    return [first.event_id, end.event_id]


@pytest.mark.parametrize("status", ["completed", "failed"])
def test_a_note_after_a_finished_run_s_end_is_stored_after_it(
    run_store: RunStore, status: str
) -> None:
    kept = _ended(run_store, "r", status)
    before = run_store.get_run("r")
    notes = [_note("r"), _note("r", {"text": "x" * 5000})]  # a large payload too (blobs)
    assert [run_store.add_event_after_end(note) for note in notes] == [True, True]
    events = run_store.get_events("r")
    assert [e.event_id for e in events] == [*kept, *(n.event_id for n in notes)]
    assert events[-1].payload == {"text": "x" * 5000} and events[-2].source == "reviewer"
    after = run_store.get_run("r")
    assert after is not None and before is not None
    assert (after.status, after.output, after.updated_at) == (status, "out", before.updated_at)
    with pytest.raises(RunNotRunningError):  # the run's own events: still refused
        run_store.add_event(sample_event("r", 2))


def test_a_running_paused_or_unknown_run_takes_no_note(run_store: RunStore) -> None:
    run_store.create_run("running", None)
    kept = _ended(run_store, "paused", "paused")
    assert run_store.add_event_after_end(_note("running")) is False
    assert run_store.add_event_after_end(_note("paused")) is False
    assert run_store.add_event_after_end(_note("nobody")) is False
    assert run_store.get_events("running") == [] and run_store.get_events("nobody") == []
    assert [e.event_id for e in run_store.get_events("paused")] == kept


def test_a_note_added_inside_an_event_loop_is_committed_at_once(run_store: RunStore) -> None:
    _ended(run_store, "r", "completed")

    async def annotate() -> bool:
        return run_store.add_event_after_end(_note("r"))

    assert asyncio.run(annotate()) is True
    assert run_store.get_events("r")[-1].type == "custom.feedback"


def test_a_note_the_store_cannot_keep_is_refused_and_nothing_stored(run_store: RunStore) -> None:
    kept = _ended(run_store, "r", "completed")
    with pytest.raises(Exception, match="larger than a run store keeps"):
        run_store.add_event_after_end(_note("r", {"text": "x" * (MAX_STORED_CHARS + 1)}))
    assert [e.event_id for e in run_store.get_events("r")] == kept
