"""A run's events are checked against the desk's ended runs and stored in one step, but that
step is per run: a store write that hangs for one run does not hold up another run's events."""

from __future__ import annotations

import threading

from deskwork import Desk, Job, Worker
from deskwork.core.event import Event
from deskwork.runtime.desk import _ENDING_STRIPES
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def _ids() -> tuple[str, str]:
    """Two run ids that the desk's locks keep apart."""
    slow = "run-slow"
    fast = next(
        f"run-fast-{n}"
        for n in range(100)
        if hash(f"run-fast-{n}") % _ENDING_STRIPES != hash(slow) % _ENDING_STRIPES
    )
    return slow, fast


class _HangingStore(InMemoryRunStore):
    """Holds the first event of one run until the test lets it go."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.entered = threading.Event()
        self.release = threading.Event()

    def add_event(self, event: Event) -> None:
        if event.run_id == self.run_id and not self.entered.is_set():
            self.entered.set()
            self.release.wait(60)
        super().add_event(event)


def test_a_hanging_store_write_of_one_run_does_not_hold_up_another_run() -> None:
    slow, fast = _ids()
    store = _HangingStore(slow)
    desk = Desk(
        model="scripted/m", adapter=ScriptedAdapter(default=lambda m, t: reply("done")),
        run_store=store,
    )  # fmt: skip
    worker = Worker(name="w")
    reports: dict[str, str] = {}

    def run(run_id: str) -> None:
        reports[run_id] = desk.run(worker, Job(input=run_id), run_id=run_id).status

    held = threading.Thread(target=run, args=(slow,))
    held.start()
    try:
        assert store.entered.wait(30)
        other = threading.Thread(target=run, args=(fast,))
        other.start()
        other.join(30)
        assert reports.get(fast) == "completed"  # while the slow run's write still hangs
        assert slow not in reports
    finally:
        store.release.set()
        held.join(30)
    assert reports[slow] == "completed"
    assert [e.type for e in store.get_events(fast)][-1] == "run.completed"


class _Tick(BaseException):
    """What a signal handler raises (as Ctrl-C's KeyboardInterrupt does)."""


def test_an_exception_from_a_signal_handler_never_leaves_a_run_unable_to_emit() -> None:
    import gc
    import signal
    import time

    desk = Desk(
        "scripted/m", adapter=ScriptedAdapter(default=reply("ok")), run_store=InMemoryRunStore()
    )
    desk.run_store.create_run("run-1", "x")
    emit = desk._emitter("run-1", [], None)
    armed = False

    def handler(_signum: int, _frame: object) -> None:
        nonlocal armed
        if armed:  # once per emit: never again in the test's own handling of it
            armed = False
            raise _Tick

    # no collection while armed: a tick in a finalizer or weakref callback of an earlier
    # test's garbage would be swallowed there ("unraisable") and leave that cleanup half done
    gc.collect()
    gc.disable()
    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.00005, 0.00005)
    ticks, deadline = 0, time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline and ticks < 2000:
            try:
                armed = True
                emit("custom.x", "s", {})
            except _Tick:
                ticks += 1
            finally:
                armed = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
        gc.enable()
    # the run's lock was released on every interrupted emit: the next event is stored at once
    done = threading.Event()
    threading.Thread(target=lambda: (emit("custom.y", "s", {}), done.set()), daemon=True).start()
    assert done.wait(5), f"the run's events hang after {ticks} interrupted emits"
    assert ticks > 0  # the handler did interrupt emits
