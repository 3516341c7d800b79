"""Events emitted on a desk's bus are stored with the run they name while it runs on the
desk, as the core document's "Event storage" says (and after its end, once it ended there)."""

from __future__ import annotations

import gc

from deskwork import Desk, Event, EventBus, Job, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import new_id, utc_now


def custom(run_id: str, **payload: object) -> Event:
    return Event(
        event_id=new_id(),
        type="custom.progress",
        timestamp=utc_now(),
        run_id=run_id,
        source="my_tool",
        payload=payload,
    )


def desk_with(*turns: object, bus: EventBus | None = None) -> Desk:
    adapter = ScriptedAdapter(list(turns))
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore(), event_bus=bus)


async def test_an_event_emitted_during_the_run_is_stored_in_order() -> None:
    desk = desk_with(call_tool("work"), reply("done"))
    seen: list[Event] = []
    desk.event_bus.subscribe("custom.progress", seen.append)

    @tool
    async def work() -> str:
        desk.event_bus.emit(custom("r1", percent=50, api_key="sk-secret-value-123456"))
        await desk.event_bus.aemit(custom("r1", percent=100))
        return "ok"

    report = await desk.arun(Worker(name="w", tools=[work]), Job(input="go"), run_id="r1")

    assert report.status == "completed", report.errors
    stored = desk.run_store.get_events("r1")
    types = [e.type for e in stored]
    at = types.index("tool.started")
    assert types[at : at + 4] == [
        "tool.started",
        "custom.progress",
        "custom.progress",
        "tool.completed",
    ]
    assert [e.event_id for e in report.events] == [e.event_id for e in stored]
    assert stored[at + 1].payload["percent"] == 50
    assert "sk-secret-value-123456" not in str(stored[at + 1].payload)
    assert [e.payload["percent"] for e in seen] == [50, 100]
    assert desk.event_bus.get_errors() == []


def test_an_event_after_the_run_is_delivered_and_stored_after_its_end() -> None:
    desk = desk_with(reply("hello"))
    report = desk.run(Worker(name="assistant"), Job(input="hello"))
    seen: list[Event] = []
    desk.event_bus.subscribe("custom.progress", seen.append)
    before = desk.run_store.get_events(report.run_id)

    desk.event_bus.emit(custom(report.run_id, percent=50))  # the seed's "Custom events"

    assert len(seen) == 1
    after = desk.run_store.get_events(report.run_id)  # see test_custom_events_after_end.py
    assert after[:-1] == before and before[-1].type == "run.completed"
    assert after[-1].type == "custom.progress"
    assert desk.event_bus.get_errors() == []


def test_an_event_of_no_run_of_the_desk_is_only_delivered() -> None:
    desk = desk_with()
    seen: list[Event] = []
    desk.event_bus.subscribe("*", seen.append)

    desk.event_bus.emit(custom("turn-1"))

    assert len(seen) == 1
    assert desk.run_store.get_events("turn-1") == []
    assert desk.run_store.get_run("turn-1") is None


def test_a_bus_does_not_keep_its_desks_alive() -> None:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe("*", seen.append)
    desk_with(bus=bus)
    gc.collect()

    bus.emit(custom("r1"))

    assert len(seen) == 1 and bus.get_errors() == []
