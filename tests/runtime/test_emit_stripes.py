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
