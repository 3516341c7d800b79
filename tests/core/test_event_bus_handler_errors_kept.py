"""What a bus keeps of its handlers' failures: the error's message is redacted (it printed
a handler's secret, while the log line of the same failure was redacted), at most
``MAX_HANDLER_ERRORS`` of them are kept (a served desk's bus kept every one, each with its
exception and traceback frames, for the life of the process)."""

from __future__ import annotations

import pytest

from deskwork import Desk, Event, Job, Worker
from deskwork.event_bus import MAX_HANDLER_ERRORS, EventBus
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.utils import new_id, utc_now

KEY = "sk-proj-abcdef0123456789abcd"


def _event(event_type: str = "custom.progress") -> Event:
    return Event(event_id=new_id(), type=event_type, timestamp=utc_now(), run_id="r", source="s")


def _leaky(event: Event) -> None:
    raise RuntimeError(f"GET https://api.example.com/v1?key={KEY} failed")


async def test_a_handler_error_does_not_tell_the_handlers_secret() -> None:
    desk = Desk(
        model="scripted/m", adapter=ScriptedAdapter([reply("ok")]), run_store=InMemoryRunStore()
    )
    desk.event_bus.subscribe("*", _leaky)
    await desk.arun(Worker(name="w"), Job(input="hi"))

    errors = desk.event_bus.get_errors()
    assert errors
    assert all(KEY not in str(error) and KEY not in repr(error) for error in errors)
    assert "RuntimeError: GET https://api.example.com/v1?key=" in str(errors[0])
    assert isinstance(errors[0].handler_error, RuntimeError)  # still wrapped as raised
    with pytest.raises(Exception, match="handler for") as raised:
        await desk.event_bus.await_pending(raise_on_error=True)
    assert KEY not in str(raised.value)


def test_a_bus_keeps_only_its_most_recent_handler_errors() -> None:
    bus = EventBus()
    bus.subscribe("*", _leaky)
    for n in range(MAX_HANDLER_ERRORS + 5):
        bus.emit(_event(f"custom.n{n}"))

    errors = bus.get_errors()
    assert len(errors) == MAX_HANDLER_ERRORS
    assert errors[0].event_type == "custom.n5"  # the oldest are dropped
    assert errors[-1].event_type == f"custom.n{MAX_HANDLER_ERRORS + 4}"
    bus.clear_errors()
    assert bus.get_errors() == []
