"""A bus's recorder may be any callable: ``add_recorder`` took only a bound method (held
weakly, for a desk), and a function or a lambda raised weakref's TypeError."""

from __future__ import annotations

import gc

from deskwork import Event
from deskwork.event_bus import EventBus
from deskwork.utils import new_id, utc_now


def _event() -> Event:
    return Event(
        event_id=new_id(), type="custom.progress", timestamp=utc_now(), run_id="r", source="s"
    )


class _Counter:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, event: Event) -> None:
        self.seen.append(event.type)


def test_a_recorder_may_be_a_function_a_lambda_or_a_callable_object() -> None:
    bus = EventBus()
    seen: list[str] = []

    def record(event: Event) -> None:
        seen.append(f"function {event.type}")

    counter = _Counter()
    counted = counter.seen
    bus.add_recorder(record)
    bus.add_recorder(lambda event: seen.append(f"lambda {event.type}"))
    bus.add_recorder(counter)
    del counter  # held by the bus: only a bound method is held weakly
    gc.collect()
    bus.emit(_event())

    assert seen == ["function custom.progress", "lambda custom.progress"]
    assert counted == ["custom.progress"]
    assert bus.get_errors() == []


def test_a_bound_methods_recorder_is_held_weakly_and_a_slotted_ones_strongly() -> None:
    class Weak:
        def __init__(self) -> None:
            self.seen = 0

        def record(self, event: Event) -> None:
            self.seen += 1

    class Slotted:
        __slots__ = ("seen",)

        def __init__(self) -> None:
            self.seen = 0

        def record(self, event: Event) -> None:
            self.seen += 1

    bus, slotted = EventBus(), Slotted()
    bus.add_recorder(Weak().record)  # its object is gone at once: it records nothing
    bus.add_recorder(slotted.record)  # no weak reference to it: held, and it records
    gc.collect()
    bus.emit(_event())

    assert slotted.seen == 1
    assert bus.get_errors() == []
