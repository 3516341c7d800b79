"""DBOS's queue polling, cheap while a queue is empty.

Every worker process polls each queue it serves (and DBOS's internal queue, where recovered
runs go) every ``QUEUE_POLL_SECONDS``. DBOS claims on each poll: a transaction that builds
and compiles several SQLAlchemy statements, reads the application's latest version, selects
the queue's ``ENQUEUED`` rows ``FOR UPDATE`` (on SQLite under the write lock, see
``_dbos_sqlite``) and commits, whether or not anything waits. An idle worker spent most of its
CPU there (about 60 ms/s of 80 on PostgreSQL), and on SQLite every idle poll took the
database's write lock from the workers that run.

:func:`skip_empty_claims` makes DBOS ask first, in one indexed read outside any transaction
(``idx_workflow_status_in_flight``), whether the queue holds an ``ENQUEUED`` workflow at all,
and claim only when it does. The read matches every row the claim could take (it leaves out
only the claim's own narrower filters: version, application), so a queued run is still
claimed at the same poll; a queue holding runs this worker cannot take claims as before.
For a second after a poll found a run, polls claim without asking (a busy worker, whose
queue holds runs, would only pay the read on top of the claim).
Private DBOS API (``SystemDatabase.dequeue_scopes``, asked once per poll before the claim,
and its tables); a sharded system database keeps DBOS's own scopes.

:func:`poll_when_runs_end` makes a queue's poller look at once when a run of that queue
ends in this process, instead of at its next poll: a worker with a free slot waited up to
``QUEUE_POLL_SECONDS`` (0.1 s on average) for its next run, with runs that take 0.2 s. DBOS's
queue threads wait between polls on the stop event of its queue manager thread; this
module hands them a :class:`_PollEvent` instead, which DBOS stops as before and which also
wakes the poller of one queue (DBOS names it ``queue-worker-<queue>``) when
``ActiveWorkflowById`` lets go of a run of that queue. A wake is never lost: a poller that
was busy when it came polls again as soon as it would wait.

:func:`back_off_while_idle` (a ``deskwork worker``'s queue) makes the poller of an empty
queue wait longer after each poll that finds it empty, up to :data:`IDLE_POLL_SECONDS`: a
run queued on an idle queue starts within about 0.5 s. The first poll that finds a run goes
back to DBOS's interval, and a run ending here still wakes the poller at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_POLL_SECONDS", "back_off_while_idle", "poll_when_runs_end", "skip_empty_claims"]

IDLE_POLL_SECONDS = 0.45
"""The longest wait between two polls of an empty queue that backs off (DBOS adds up to 5 %
jitter and the claim's round trips)."""
_IDLE_GROWTH = 1.5
"""How much longer a backing-off poller waits after each poll that found its queue empty."""
_log = logging.getLogger("deskwork.durable")
_empty_polls: dict[str, int] = {}
"""Per queue: the polls in a row that found it empty (written by its one poller thread)."""
_BUSY_SECONDS = 1.0
"""After a poll found its queue holding a run, the polls of the next second claim without
asking first (a busy worker's poll costs what DBOS's does, one read a second more)."""
_found_at: dict[str, float] = {}
"""Per queue: when a poll last found it holding a run (``time.monotonic``)."""
_backing_off: set[str] = set()
"""The queues whose pollers back off while they stay empty (:func:`back_off_while_idle`)."""


def back_off_while_idle(queue_name: str) -> None:
    """Poll ``queue_name`` less often while it stays empty (up to :data:`IDLE_POLL_SECONDS`
    between polls); back to DBOS's interval as soon as a poll finds a run."""
    _backing_off.add(queue_name)


def _wait_seconds(queue_name: str, seconds: float) -> float:
    """How long the poller of ``queue_name`` waits where DBOS asks for ``seconds``."""
    if queue_name not in _backing_off:
        return seconds
    empty = min(_empty_polls.get(queue_name, 0), 20)
    return max(seconds, min(IDLE_POLL_SECONDS, seconds * _IDLE_GROWTH**empty))


def _enqueued_query(sys_db: Any) -> Any:
    """``SELECT 1 ... WHERE queue_name = :queue AND status = 'ENQUEUED' LIMIT 1``, built
    once per system database (a reused statement keeps SQLAlchemy's cache key)."""
    query = getattr(sys_db, "_deskwork_enqueued", None)
    if query is None:
        import sqlalchemy as sa

        ws = sys_db.tables.workflow_status
        query = (
            sa.select(sa.literal_column("1"))
            .select_from(ws)
            .where(ws.c.queue_name == sa.bindparam("queue"))
            .where(ws.c.status == "ENQUEUED")
            .where(sys_db._in_flight_status_prover())  # SQLite: use the partial index
            .limit(1)
        )
        sys_db._deskwork_enqueued = query
    return query


def _has_enqueued(sys_db: Any, queue_name: str) -> bool:
    """Whether ``queue_name`` holds an ``ENQUEUED`` workflow (one autocommit read)."""
    with sys_db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        row = conn.execute(_enqueued_query(sys_db), {"queue": queue_name}).first()
    return row is not None


def skip_empty_claims() -> None:
    """Make DBOS's queue poll claim only when its queue holds a queued workflow (idempotent)."""
    try:
        from dbos._sys_db import SystemDatabase
    except ImportError:  # pragma: no cover - another DBOS version
        return
    original = SystemDatabase.dequeue_scopes
    if getattr(original, "deskwork", False):
        return

    def dequeue_scopes(self: Any, queue_name: str) -> list[str | None]:
        scopes: list[str | None] = original(self, queue_name)
        if scopes != [None] or getattr(self, "sharded", False):
            return scopes  # a sharded database: each scope claims under its own key
        asked = time.monotonic()
        if asked - _found_at.get(queue_name, -_BUSY_SECONDS) < _BUSY_SECONDS:
            return scopes  # a busy queue: claim as DBOS does, without asking first
        try:
            queued = _has_enqueued(self, queue_name)
        except Exception as exc:  # the claim meets the same error and DBOS reports it
            _log.debug("asking whether queue %s holds runs failed: %s", queue_name, exc)
            queued = True
        _empty_polls[queue_name] = 0 if queued else _empty_polls.get(queue_name, 0) + 1
        if queued:
            _found_at[queue_name] = asked
        return scopes if queued else []

    dequeue_scopes.deskwork = True  # type: ignore[attr-defined]
    setattr(SystemDatabase, "dequeue_scopes", dequeue_scopes)  # noqa: B010 - DBOS's class


_POLLER_PREFIX = "queue-worker-"
"""DBOS's name of the thread that polls one queue (``queue-worker-<queue>``)."""


class _PollEvent(threading.Event):
    """The stop event of DBOS's queue threads, which can also wake one queue's poller.

    ``wait`` returns ``True`` once stopped (``set``, or the event it stands in for), and
    ``False`` at its timeout or when the calling thread's queue was woken since it last
    looked: DBOS's poller then polls at once."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self._stop = stop  # DBOS's own event, in case DBOS set it before the swap
        self._changed = threading.Condition(threading.Lock())
        self._stopped = False
        self._woken: dict[str, int] = {}  # per queue: wakes so far
        self._seen: dict[int, int] = {}  # per poller thread: the wakes of its queue it saw

    def is_set(self) -> bool:
        return self._stopped or self._stop.is_set()

    def set(self) -> None:
        self._stop.set()
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    def clear(self) -> None:  # pragma: no cover - DBOS never restarts a stopped thread
        self._stop.clear()
        with self._changed:
            self._stopped = False

    def wake(self, queue_name: str) -> None:
        """Make the poller of ``queue_name`` poll now (or right after its current poll)."""
        with self._changed:
            self._woken[queue_name] = self._woken.get(queue_name, 0) + 1
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        thread = threading.current_thread()
        queue = thread.name[len(_POLLER_PREFIX) :] if thread.name.startswith(_POLLER_PREFIX) else ""
        if queue and timeout is not None:
            timeout = _wait_seconds(queue, timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while not self.is_set():
                if queue:
                    woken, seen = self._woken.get(queue, 0), self._seen.get(thread.ident or 0)
                    self._seen[thread.ident or 0] = woken
                    if seen is not None and seen != woken:
                        return False  # a run of its queue ended: poll now
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
            return True


_polls: _PollEvent | None = None
"""The stop event of this process's DBOS queue threads (``None`` before DBOS launches)."""


def poll_when_runs_end() -> None:
    """Make a queue's poller poll when a run of its queue ends here (idempotent)."""
    try:
        from dbos import _dbos
        from dbos._core import ActiveWorkflowById
    except ImportError:  # pragma: no cover - another DBOS version
        return
    manager: Callable[[threading.Event, Any], None] = vars(_dbos)["queue_thread"]
    if getattr(manager, "deskwork", False):
        return

    def queue_thread(stop: threading.Event, dbos: Any) -> None:
        global _polls
        polls = _PollEvent(stop)
        events: list[threading.Event] = dbos.background_thread_stop_events
        events[:] = [polls if event is stop else event for event in events]
        _polls = polls
        manager(polls, dbos)

    remove = ActiveWorkflowById._remove

    def _remove(self: Any, key: str, bucket: Any) -> None:
        remove(self, key, bucket)
        polls = _polls
        if bucket is not None and polls is not None:  # a run of a queue: its slot is free
            polls.wake(bucket[0])

    queue_thread.deskwork = True  # type: ignore[attr-defined]
    setattr(_dbos, "queue_thread", queue_thread)  # noqa: B010 - read by DBOS.launch
    setattr(ActiveWorkflowById, "_remove", _remove)  # noqa: B010 - a method of DBOS's class
