"""Fencing a process whose executor lock was lost while it lives (PostgreSQL).

The executor lock (``_executor_lock``) says a process is alive. On PostgreSQL it is a
session advisory lock, and a session can end while its process goes on (a server restart,
``pg_terminate_backend``, a network cut): another process then finds the lock free and takes
the runs over. Without a fence both would run them, and their side effects would happen
twice. The fence:

- a watchdog thread asks the lock's session every :data:`WATCH_SECONDS` whether it is
  still there (``SELECT 1``). When it is gone, the lock is lost: the watchdog takes it again
  on a new session as soon as it can (never while another process holds it to take over).
- a run takes a step only when the lock was seen held in the last :data:`FRESH_SECONDS`
  (:meth:`Fence.admit`, called before every event, and so before every model and tool
  call). Otherwise it waits, storing nothing, until the lock is held again. So does a run
  whose watchdog is late (a starved thread, a network that swallows the round trip).
- once the lock is held again after a loss, each run checks that DBOS still lets it own
  its workflow (``owns``): a run another process took over meanwhile stops there, and DBOS
  parks it until the owner records the outcome. The others go on where they waited.

A process that takes a lock over waits ``TAKEOVER_GRACE_SECONDS`` (more than
:data:`FRESH_SECONDS`) before it hands the runs on, so the former holder has stopped taking
steps by then. A step already running in the former holder finishes there (as after a crash,
the new owner runs it again). An ``flock`` is never lost while its process lives: SQLite
runs need no fence.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from deskwork._logs import get_stdlib_logger
from deskwork.runtime._executor_lock import TAKEOVER_GRACE_SECONDS, ExecutorLock

__all__ = ["FRESH_SECONDS", "WATCH_SECONDS", "Fence"]

WATCH_SECONDS = 0.2
"""How often the watchdog asks the lock's session whether it is still there."""
FRESH_SECONDS = 1.0
"""A run takes a step only if the lock was seen held this recently."""
assert FRESH_SECONDS < TAKEOVER_GRACE_SECONDS
_log = get_stdlib_logger("deskwork.durable")


class Fence:
    """The watchdog of one process's executor lock, and the gate its runs pass."""

    def __init__(self, lock: ExecutorLock, executor_id: str) -> None:
        self.lock = lock
        self.executor_id = executor_id
        self.losses = 0
        """How often the lock was lost so far."""
        self._seen = time.monotonic()  # the last time the lock was seen held
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="deskwork-fence", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (before the lock is released); runs waiting go on."""
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def _saw(self, seen: float) -> None:
        with self._changed:
            self._seen = seen
            self._changed.notify_all()

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_SECONDS):
            asked = time.monotonic()  # the server vouches for the lock as of the question
            if self._held():
                self._saw(asked)
                continue
            with self._changed:
                self._seen = -math.inf  # no step from now on, however recent the last look
                self.losses += 1
            _log.warning(
                "executor %s lost its lock (its database session ended): its runs wait at"
                " their next step until it holds the lock again",
                self.executor_id,
            )
            asked = time.monotonic()
            while not self._reacquired():
                if self._stop.wait(WATCH_SECONDS):
                    return
                asked = time.monotonic()
            _log.warning("executor %s holds its lock again", self.executor_id)
            self._saw(asked)

    def _held(self) -> bool:
        try:
            return self.lock.held()
        except Exception:  # whatever the session did, it does not vouch for the lock
            _log.exception("executor %s: checking its lock failed", self.executor_id)
            return False

    def _reacquired(self) -> bool:
        try:
            return self.lock.reacquire()
        except Exception:  # the watchdog must outlive a failed attempt: try again soon
            _log.exception("executor %s: taking its lock again failed", self.executor_id)
            return False

    def admit(self, losses: int, owns: Callable[[], bool]) -> int | None:
        """Wait until the lock was seen held in the last :data:`FRESH_SECONDS`; the losses
        the run has now seen (it saw ``losses`` before). ``None`` when the lock was lost
        since then and the run no longer owns its workflow (``owns()``, asked until the
        database answers): another process took it over."""
        if self.losses == losses and time.monotonic() - self._seen <= FRESH_SECONDS:
            return losses  # the common case, without a lock
        with self._changed:
            while time.monotonic() - self._seen > FRESH_SECONDS and not self._stop.is_set():
                self._changed.wait(WATCH_SECONDS)
            now = self.losses
        if now == losses:
            return now
        while True:
            try:
                return now if owns() else None
            except Exception as exc:  # the database is away again: ask once it is back
                _log.warning("executor %s: asking who owns a run failed: %s", self.executor_id, exc)
                if self._stop.wait(WATCH_SECONDS):
                    return now
