"""An event whose own texts (its type, its source) hold a NUL or a lone surrogate is refused
by every run store with the same 'refused a value' StoreError, so one program ends the same
way on each: PostgreSQL refused it (a text column of its own), while SQLite (which keeps
them in the batch's JSON) and the in-memory store kept it and the run completed."""

from __future__ import annotations

from typing import Any

import pytest
from storekit import sample_event

from deskwork import Desk, Job, Report, RunConfig, RunState
from deskwork.store import InMemoryRunStore, RunStore, StoreError
from deskwork.testing import ScriptedAdapter

ODD_TEXTS = {
    "nul-type": ("custom\x00step", "tool"),
    "nul-source": ("custom.step", "my\x00tool"),
    "surrogate-type": ("custom\ud800step", "tool"),
    "surrogate-source": ("custom.step", "my\ud800tool"),
}


class Emitting:
    """A runner that emits one custom event, then completes."""

    name = "emitting"
    runner_type = "custom"

    def __init__(self, event_type: str, source: str) -> None:
        self.event_type, self.source = event_type, source

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        config.emit(self.event_type, self.source, {"n": 1})
        report = Report(run_id=config.run_id, status="completed", content="done")
        state = RunState(
            run_id=config.run_id,
            status="completed",
            runner_type=self.runner_type,
            runner_name=self.name,
            job=job.to_state(),
        )
        return report, state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        raise NotImplementedError


@pytest.mark.parametrize("texts", ODD_TEXTS.values(), ids=ODD_TEXTS.keys())
def test_a_run_emitting_an_event_with_an_unstorable_type_or_source_fails_on_every_store(
    run_store: RunStore, texts: tuple[str, str]
) -> None:
    desk = Desk(model="m", adapter=ScriptedAdapter(), run_store=run_store)
    report = desk.run(Emitting(*texts), Job(input="go"))
    assert report.status == "failed"
    assert "refused a value" in report.errors[0]
    stored = [e.type for e in run_store.get_events(report.run_id)]
    assert stored == [e.type for e in report.events] == ["run.started", "run.failed"]
    record = run_store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
    report = desk.run(Emitting("custom.step", "tool"), Job(input="go"))  # the desk goes on
    assert report.status == "completed"


@pytest.mark.parametrize("texts", ODD_TEXTS.values(), ids=ODD_TEXTS.keys())
def test_add_event_refuses_an_unstorable_type_or_source(
    run_store: RunStore, texts: tuple[str, str]
) -> None:
    run_store.create_run("r", None)
    kept = sample_event("r", 1)
    run_store.add_event(kept)
    odd = sample_event("r", 2).model_copy(update={"type": texts[0], "source": texts[1]})
    for _ in range(2):  # again: a store that remembers what it checked still refuses
        with pytest.raises(StoreError, match="refused a value"):
            run_store.add_event(odd)
    run_store.add_event(sample_event("r", 3))  # the run goes on
    assert [e.type for e in run_store.get_events("r")] == ["custom.1", "custom.3"]


@pytest.mark.parametrize("texts", ODD_TEXTS.values(), ids=ODD_TEXTS.keys())
def test_finish_run_refuses_an_end_event_with_an_unstorable_type_or_source(
    run_store: RunStore, texts: tuple[str, str]
) -> None:
    run_store.create_run("r", None)
    end = sample_event("r", 1).model_copy(update={"type": "run.completed", "source": texts[1]})
    if texts[0] != "custom.step":
        end = end.model_copy(update={"type": texts[0]})
    with pytest.raises(StoreError, match="refused a value"):
        run_store.finish_run("r", "completed", "done", None, None, end)
    record = run_store.get_run("r")
    assert record is not None and record.status == "running"  # left as it was
    assert run_store.get_events("r") == []


@pytest.mark.parametrize("odd_id", ["e\x00", "e\ud800"])
def test_the_sql_stores_refuse_an_unstorable_event_id(run_store: RunStore, odd_id: str) -> None:
    run_store.create_run("r", None)
    event = sample_event("r", 1).model_copy(update={"event_id": odd_id})
    if isinstance(run_store, InMemoryRunStore):  # it does not look at an event's id (its
        run_store.add_event(event)  # cost; docs/stores.md): kept, and given back equal
        assert [e.event_id for e in run_store.get_events("r")] == [odd_id]
        return
    with pytest.raises(StoreError, match="refused a value"):
        run_store.add_event(event)
    assert run_store.get_events("r") == []
