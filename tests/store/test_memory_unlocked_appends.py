"""The in-memory store appends a running run's events without its lock: a run ended by
another thread meanwhile must still keep exactly the events whose ``add_event`` returned,
and none of those it refused."""

from __future__ import annotations

import builtins
import sys
import threading
from collections.abc import Iterator

import pytest

import deskwork.store.memory as memory
from deskwork.core.event import new_event
from deskwork.core.types import RunStatus
from deskwork.exceptions import RunNotRunningError
from deskwork.store import InMemoryRunStore


@pytest.fixture
def frequent_switches() -> Iterator[None]:
    """Threads switch every microsecond, so an append often lands while the run ends."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _race(status: RunStatus, *, finish: bool) -> tuple[set[str], set[str], set[str]]:
    """Four threads add events until the run's end (in this thread) refuses them: the ids
    of the events kept, of those refused, and of those stored."""
    store = InMemoryRunStore()
    store.create_run("r", "input")
    kept: list[str] = []
    refused: list[str] = []
    started = threading.Barrier(5)

    def write(worker: int) -> None:
        started.wait()
        for i in range(100_000):  # until the run's end refuses one
            event = new_event("r", "step.started", f"w{worker}", {"i": i})
            try:
                store.add_event(event)
            except RunNotRunningError:
                refused.append(event.event_id)
                return
            kept.append(event.event_id)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    started.wait()
    while len(kept) < 50:  # end the run while the writers are busy
        pass
    end = new_event("r", "run.completed" if status == "completed" else "run.paused", "s", {})
    if finish:
        store.finish_run("r", status, None, None, None, end)
    else:
        store.update_run("r", status, None, None, None)
    for thread in threads:
        thread.join()
    stored = {event.event_id for event in store.get_events("r")}
    if finish:
        kept.append(end.event_id)
    return set(kept), set(refused), stored


@pytest.mark.usefixtures("frequent_switches")
@pytest.mark.parametrize(("status", "finish"), [("completed", True), ("paused", False)])
def test_a_run_ended_by_another_thread_keeps_exactly_the_events_it_accepted(
    status: RunStatus, finish: bool
) -> None:
    for _ in range(20):
        kept, refused, stored = _race(status, finish=finish)
        assert len(refused) == 4
        assert stored == kept
        assert not stored & refused


class _AsTuple(type):
    """A stand-in for ``tuple`` that ``isinstance`` takes for it."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, builtins.tuple)


def test_an_append_racing_the_close_is_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: an add whose append lands after the close copied the run's list, and
    whose check runs before the copy replaces it, returns; so its event is stored."""
    store = InMemoryRunStore()
    store.create_run("r", "input")
    store.add_event(new_event("r", "step.started", "s", {}))
    racing = new_event("r", "step.started", "racer", {})
    fired = []

    class TupleThenRace(metaclass=_AsTuple):  # the module's ``tuple``, whose copy races
        def __new__(cls, items=()):  # type: ignore[no-untyped-def]
            copied = builtins.tuple(items)
            if not fired and type(items) is list:  # the close's copy: another add lands now
                fired.append(True)
                store.add_event(racing)  # returns: its list is still the run's
            return copied

    monkeypatch.setattr(memory, "tuple", TupleThenRace, raising=False)
    store.update_run("r", "paused", None, None, None)
    monkeypatch.undo()
    assert fired
    assert racing.event_id in [e.event_id for e in store.get_events("r")]
