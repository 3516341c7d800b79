"""The fence's watchdog on a flaky database: it outlives every failed attempt to check or
take its lock again (else every run of the process would wait for good), and it counts the
lock as seen when it asked, not when the answer came back (a late answer must not let steps
run past the takeover grace)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from deskwork.runtime import _executor_lock
from deskwork.runtime._fence import Fence


class _Session:
    def execute(self, *args: object) -> object:
        raise psycopg.OperationalError("terminating connection due to administrator command")

    def close(self) -> None:
        pass


def test_reacquire_reports_a_session_that_fails_its_first_query_as_not_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lock = _executor_lock._AdvisoryLock("postgresql://nowhere/db")
    lock._executor_id = "x"
    monkeypatch.setattr(lock, "_connect", lambda name="": _Session())
    assert lock.reacquire() is False  # raises psycopg.OperationalError instead


class _FlakyLock:
    """Lost once; taking it again fails with a driver error once, then works."""

    can_be_lost = True

    def __init__(self) -> None:
        self.attempts = 0
        self.lost = True

    def held(self) -> bool:
        return not self.lost

    def reacquire(self) -> bool:
        self.attempts += 1
        if self.attempts == 1:
            raise psycopg.OperationalError("the database system is shutting down")
        self.lost = False
        return True


def test_the_watchdog_survives_a_failed_attempt_to_take_the_lock_again() -> None:
    lock = _FlakyLock()
    fence = Fence(lock, "e")  # type: ignore[arg-type]
    fence.start()
    try:
        deadline = time.monotonic() + 10
        while lock.attempts < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.attempts >= 2, "the watchdog thread died after the first failed attempt"
        admitted = threading.Event()
        threading.Thread(
            target=lambda: (fence.admit(0, lambda: True), admitted.set()), daemon=True
        ).start()
        assert admitted.wait(10)
    finally:
        fence.stop()


class _SlowRoundTripLock:
    """The first check's answer takes 1.2 s to come back (a loaded machine, a starved
    thread); after it the network is cut: every later check hangs."""

    can_be_lost = True

    def __init__(self) -> None:
        self.asked_at: list[float] = []
        self.cut = threading.Event()
        self.answered = threading.Event()

    def held(self) -> bool:
        self.asked_at.append(time.monotonic())
        if len(self.asked_at) == 1:
            time.sleep(1.2)  # the server answered at once; the answer is read 1.2 s later
            self.answered.set()
            return True
        self.cut.wait()
        return False

    def reacquire(self) -> bool:
        return False


def test_the_lock_counts_as_seen_when_it_was_asked_not_when_the_answer_was_read() -> None:
    """The server said "held" at asked_at[0] at the latest; the session may have ended (and
    another process may have taken the lock over, waiting 2 s) right after. The fence lets
    steps run until _seen + 1 s, and _seen is stamped after held() returned: here until
    asked_at[0] + 2.2 s, past the 2 s takeover grace -- both processes take steps."""
    lock = _SlowRoundTripLock()
    fence = Fence(lock, "e")  # type: ignore[arg-type]
    fence._seen = -float("inf")  # only what the watchdog sees counts
    fence.start()
    try:
        assert lock.answered.wait(10)
        time.sleep(0.05)
        asked = lock.asked_at[0]
        assert fence._seen <= asked, (
            f"the lock is taken as seen {fence._seen - asked:.2f} s after it was asked"
        )
    finally:
        lock.cut.set()
        fence.stop()
