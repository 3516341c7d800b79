"""Helpers of the tests that cancel a durable run while its workflow goes on (imported as a
plain module by tests/durable and tests/serve).

``desk.cancel`` stores the run's end at once; DBOS stops the workflow only at its next step,
so these tests hold the run at a chosen event until the cancel is in, and wait for the
workflow to stop before they read what the run stored.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from deskwork import Desk

__all__ = ["hold_at_first", "workflows_done"]


def hold_at_first(desk: Desk, event_type: str) -> tuple[threading.Event, threading.Event]:
    """``(reached, release)``: the run's first ``event_type`` event sets ``reached``, then
    holds the run (its handler runs inline) until the test sets ``release`` (at most 60 s)."""
    reached, release = threading.Event(), threading.Event()

    def hold(event: Any) -> None:
        if not reached.is_set():
            reached.set()
            release.wait(60)

    desk.event_bus.subscribe(event_type, hold)
    return reached, release


def workflows_done(timeout: float = 60) -> None:
    """Wait until no workflow task of this process runs (a cancelled run's goes on)."""
    from dbos._dbos import _get_dbos_instance

    tasks = _get_dbos_instance()._workflow_tasks  # private: DBOS's running workflow tasks
    deadline = time.monotonic() + timeout
    while any(not task.done() for task in list(tasks)):
        assert time.monotonic() < deadline, "the cancelled workflow never stopped"
        time.sleep(0.05)
