"""EventBus recorders: they see what ``emit``/``aemit`` get, not what ``deliver`` gets."""

from __future__ import annotations

import gc

from deskwork import Event, EventHandlerError
from deskwork.event_bus import EventBus
from deskwork.utils import new_id, utc_now


def _event(event_type: str = "custom.progress") -> Event:
    return Event(event_id=new_id(), type=event_type, timestamp=utc_now(), run_id="r", source="s")


class Recorder:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def record(self, event: Event) -> None:
        self.seen.append(event.type)

    def fail(self, event: Event) -> None:
        raise RuntimeError("store down")


async def test_recorders_see_emitted_events_before_the_handlers() -> None:
    bus, recorder = EventBus(), Recorder()
    order: list[list[str]] = []
    bus.add_recorder(recorder.record)
    bus.subscribe("*", lambda e: order.append(list(recorder.seen)))

    bus.emit(_event("a"))
    await bus.aemit(_event("b"))
    bus.deliver(_event("c"))  # a desk's own events, stored already

    assert recorder.seen == ["a", "b"]
    assert order == [["a"], ["a", "b"], ["a", "b"]]


def test_a_failing_recorder_is_collected_and_the_event_still_delivered() -> None:
    bus, recorder = EventBus(), Recorder()
    seen: list[Event] = []
    bus.add_recorder(recorder.fail)
    bus.subscribe("*", seen.append)

    bus.emit(_event())

    assert len(seen) == 1
    [error] = bus.get_errors()
    assert isinstance(error, EventHandlerError) and "store down" in str(error)


def test_a_recorder_is_held_weakly() -> None:
    bus, recorder = EventBus(), Recorder()
    bus.add_recorder(recorder.record)
    del recorder
    gc.collect()

    bus.emit(_event())
    kept = Recorder()
    bus.add_recorder(kept.record)  # drops the dead one
    bus.emit(_event())

    assert bus.get_errors() == [] and len(bus._recorders) == 1
    assert kept.seen == ["custom.progress"]
