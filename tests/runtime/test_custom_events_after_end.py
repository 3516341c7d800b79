"""A custom event emitted on a desk's bus for a run that ended on that desk is stored after
the run's end, as the core document's "Event storage" and its "Custom events" sample (an
event emitted once ``desk.run`` returned) say; it was only delivered to the handlers.

Only the desk that stored the run's end stores such an event (a bus shared by two desks
stores it once), and never for a paused run (its log goes on when resumed), a run another
process ended (its leftovers stay out), or as a ``run.*`` event (a log has one end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Event, EventBus, Job, Worker
from deskwork.core.event import EventType, new_event
from deskwork.store import InMemoryRunStore, RunStore, SQLiteRunStore
from deskwork.store._blobs import MAX_STORED_CHARS
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import new_id, utc_now

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def custom(run_id: str, kind: str = "custom.progress", **payload: object) -> Event:
    return Event(event_id=new_id(), type=kind, timestamp=utc_now(), run_id=run_id,
                 source="my_tool", payload=payload)  # fmt: skip


def _store(kind: str, tmp_path: Path) -> RunStore:
    return InMemoryRunStore() if kind == "memory" else SQLiteRunStore(tmp_path / "runs.db")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_custom_events_sample_stores_its_event_after_the_run_s_end(
    kind: str, tmp_path: Path
) -> None:
    store = _store(kind, tmp_path)
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter([reply("hello")]), run_store=store)
    seen: list[Event] = []
    desk.event_bus.subscribe("custom.progress", seen.append)
    report = desk.run(Worker(name="assistant"), Job(input="hello"))

    desk.event_bus.emit(custom(report.run_id, percent=50, api_key=SECRET))

    stored = desk.run_store.get_events(report.run_id)
    assert [e.type for e in stored[-2:]] == ["run.completed", "custom.progress"]
    assert stored[-1].payload["percent"] == 50 and SECRET not in str(stored[-1].payload)
    assert len(seen) == 1 and desk.event_bus.get_errors() == []
    assert [e.event_id for e in report.events] == [e.event_id for e in stored[:-1]]
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed"
    store.close()


async def test_an_awaited_emit_after_a_failed_run_is_stored_after_its_end() -> None:
    adapter = ScriptedAdapter([reply("x")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = await desk.arun(Worker(name="w"), Job(input="go"), limits={"max_iterations": 0})
    assert report.status == "failed", report
    await desk.event_bus.aemit(custom(report.run_id, "custom.feedback", score=1))
    assert [e.type for e in desk.run_store.get_events(report.run_id)[-2:]] == [
        "run.failed",
        "custom.feedback",
    ]


def test_a_bus_shared_by_two_desks_stores_the_event_once() -> None:
    bus, store = EventBus(), InMemoryRunStore()
    ran = Desk(model="scripted/m", adapter=ScriptedAdapter([reply("a")]), run_store=store,
               event_bus=bus)  # fmt: skip
    other = Desk(model="scripted/m", adapter=ScriptedAdapter([]), run_store=store, event_bus=bus)
    report = ran.run(Worker(name="w"), Job(input="go"))

    bus.emit(custom(report.run_id))

    types = [e.type for e in store.get_events(report.run_id)]
    assert types.count("custom.progress") == 1 and other is not None


def test_a_paused_run_and_run_events_take_nothing_after_the_end() -> None:
    @tool(requires_confirmation=True)
    def refund(order: str) -> str:
        """Refund an order."""
        return order

    adapter = ScriptedAdapter([call_tool("refund", order="7"), reply("done"), reply("x")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    paused = desk.run(Worker(name="w", tools=[refund]), Job(input="refund 7"))
    assert paused.status == "paused"
    desk.event_bus.emit(custom(paused.run_id))
    assert desk.run_store.get_events(paused.run_id)[-1].type == "run.paused"

    done = desk.run(Worker(name="v"), Job(input="hi"))
    for fake in ("run.completed", "run.started", "run.resumed", "run.reviewed"):
        desk.event_bus.emit(custom(done.run_id, fake))
    assert desk.run_store.get_events(done.run_id)[-1].type == "run.completed"


def test_a_run_another_process_ended_takes_nothing_after_that_end(tmp_path: Path) -> None:
    store, other = SQLiteRunStore(tmp_path / "r.db"), SQLiteRunStore(tmp_path / "r.db")
    run_ids: list[str] = []

    @tool()
    def slow_step() -> str:
        """Works while another process ends the run."""
        end = new_event(run_ids[0], EventType.RUN_FAILED, "deskwork runs fail", {"errors": []})
        other.finish_run(run_ids[0], "failed", None, None, None, end)
        return "done"

    adapter = ScriptedAdapter([call_tool("slow_step"), reply("finished")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    run_ids.append(new_id())
    report = desk.run(Worker(name="w", tools=[slow_step]), Job(input="go"), run_id=run_ids[0])
    assert report.status == "failed" and "ended elsewhere" in report.errors[0]

    desk.event_bus.emit(custom(report.run_id))  # the stopped run's tool, late

    assert store.get_events(report.run_id)[-1].type == "run.failed"
    store.close()
    other.close()


def test_a_late_event_the_store_refuses_is_a_bus_error_and_still_delivered() -> None:
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter([reply("a")]),
                run_store=InMemoryRunStore())  # fmt: skip
    seen: list[Event] = []
    desk.event_bus.subscribe("custom.progress", seen.append)
    report = desk.run(Worker(name="w"), Job(input="go"))

    desk.event_bus.emit(custom(report.run_id, text="x" * (MAX_STORED_CHARS + 1)))

    assert len(seen) == 1
    (error,) = desk.event_bus.get_errors()
    assert "larger than a run store keeps" in str(error)
    assert desk.run_store.get_events(report.run_id)[-1].type == "run.completed"
