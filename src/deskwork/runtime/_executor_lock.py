"""Whether a durable executor (one process running DBOS workflows) is still alive.

Every process that runs durable runs holds a lock named after its DBOS executor id for as long
as it lives; the operating system or the database drops the lock when the holder dies, however
it dies (``kill -9`` included). A process that wants to take over another executor's unfinished
runs first takes that executor's lock: it gets it only when the holder is gone, and holds it
while it takes over, so two survivors never take over the same runs.

- SQLite (one machine): ``flock`` on ``<database>.executors/<executor id>.lock``.
- PostgreSQL (many machines): a session advisory lock keyed by the executor id, on a
  connection the process keeps open.

There is no lease and no timestamp: a slow holder is never presumed dead.

A PostgreSQL session can end while its process lives (a server restart,
``pg_terminate_backend``, a network cut): the lock is then free although its holder runs.
:meth:`ExecutorLock.held` tells the holder (the fence of ``_fence`` asks every 0.2 s), and a
process that takes a lock over waits :data:`TAKEOVER_GRACE_SECONDS` before it hands the runs
on, time for a holder that lost its session to have stopped its runs. An ``flock`` is
released only when its file descriptor closes (at exit or :meth:`ExecutorLock.release`):
it is never lost while its holder lives.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from deskwork.exceptions import ConfigurationError
from deskwork.store._url import is_postgres, redact_url, scrub, sqlite_path

__all__ = ["TAKEOVER_GRACE_SECONDS", "ExecutorLock", "open_executor_lock"]

TAKEOVER_GRACE_SECONDS = 2.0
"""How long a process that took over a lock that can be lost waits before it hands the runs
on: longer than the fence lets a holder run without seeing its lock held
(``_fence.FRESH_SECONDS``), so the holder has stopped taking steps by then."""


class ExecutorLock(Protocol):
    """The lock this process holds as its executor, and the test of other executors."""

    can_be_lost: bool
    """Whether the lock can be lost while this process lives (a database session)."""

    def hold(self, executor_id: str) -> None:
        """Take this process's own lock (kept until :meth:`release` or death)."""

    def held(self) -> bool:
        """Whether this process still holds its own lock (a cheap round trip)."""

    def reacquire(self) -> bool:
        """Take this process's own lock again after it was lost; ``False`` when it cannot
        (the database is unreachable, or another process holds it to take over)."""

    @contextlib.contextmanager
    def take_over(self, executor_id: str) -> Iterator[bool]:
        """Yield ``True`` while holding the lock of ``executor_id``, whose holder is dead;
        ``False`` when the holder is alive (or another process is taking over)."""
        yield False  # pragma: no cover - protocol

    def release(self) -> None:
        """Drop every lock this process holds."""


def open_executor_lock(database_url: str) -> ExecutorLock:
    """The executor lock of the database at ``database_url``."""
    if is_postgres(database_url):
        return _AdvisoryLock(database_url)
    path = sqlite_path(database_url)
    assert path is not None  # the URL was checked by resolve_database_url
    return _FileLock(Path(f"{path}.executors"))


def _safe(executor_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", executor_id) or "_"


class _FileLock:
    """``flock`` locks: released by the kernel when the process dies."""

    can_be_lost = False

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._own: int | None = None
        self._own_path: Path | None = None

    def _path(self, executor_id: str) -> Path:
        return self.directory / f"{_safe(executor_id)}.lock"

    def hold(self, executor_id: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(executor_id)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise ConfigurationError(f"executor {executor_id!r} is already running") from exc
        self._own, self._own_path = fd, path

    def held(self) -> bool:
        return self._own is not None

    def reacquire(self) -> bool:
        return self._own is not None

    @contextlib.contextmanager
    def take_over(self, executor_id: str) -> Iterator[bool]:
        path = self._path(executor_id)
        if path == self._own_path:
            yield False
            return
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:  # no directory: the executor never ran here
            yield True
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its process is alive
            os.close(fd)
            yield False
            return
        try:
            yield True
        finally:
            with contextlib.suppress(OSError):
                path.unlink()
            os.close(fd)

    def release(self) -> None:
        if self._own is not None:
            with contextlib.suppress(OSError):
                assert self._own_path is not None
                self._own_path.unlink()
            os.close(self._own)
            self._own, self._own_path = None, None


def _lock_key(executor_id: str) -> int:
    digest = hashlib.sha256(f"deskwork-executor:{executor_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _AdvisoryLock:
    """PostgreSQL session advisory locks: released by the server when the session ends.

    The session of this process's own lock is named ``deskwork executor <executor id>``
    (``application_name``, seen in ``pg_stat_activity``), and TCP keepalives and a user
    timeout make a dead network fail its round trips within seconds instead of hours."""

    can_be_lost = True

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._executor_id = ""

    def _connect(self, name: str = "deskwork takeover") -> Any:
        import psycopg

        try:
            return psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=10,
                application_name=name[:63],
                keepalives=1,
                keepalives_idle=5,
                keepalives_interval=2,
                keepalives_count=2,
                tcp_user_timeout=5000,
            )
        except psycopg.Error as exc:
            raise ConfigurationError(
                f"cannot connect to {redact_url(self.url)}: {scrub(str(exc), self.url)}"
            ) from exc

    def _try_own(self) -> bool:
        """Open a session and take this process's lock on it; ``False`` if held elsewhere."""
        import psycopg

        conn = self._connect(f"deskwork executor {self._executor_id}")
        try:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s)", (_lock_key(self._executor_id),)
            ).fetchone()
        except psycopg.Error as exc:  # the session failed at once (a server restarting)
            conn.close()
            raise ConfigurationError(
                f"cannot take the executor lock on {redact_url(self.url)}:"
                f" {scrub(str(exc), self.url)}"
            ) from exc
        if not row or not row[0]:
            conn.close()
            return False
        self._conn = conn
        return True

    def hold(self, executor_id: str) -> None:
        self._executor_id = executor_id
        if not self._try_own():
            raise ConfigurationError(f"executor {executor_id!r} is already running")

    def held(self) -> bool:
        try:
            self._conn.execute("SELECT 1")
        except Exception:  # the session ended (or the network is gone): so did the lock
            return False
        return True

    def reacquire(self) -> bool:
        self.release()
        try:
            return self._try_own()
        except ConfigurationError:
            return False

    @contextlib.contextmanager
    def take_over(self, executor_id: str) -> Iterator[bool]:
        key = _lock_key(executor_id)
        conn = self._connect()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            taken = bool(row and row[0])
            if taken:  # a holder that only lost its session stops its runs meanwhile
                time.sleep(TAKEOVER_GRACE_SECONDS)
            yield taken
        finally:
            conn.close()  # ends the session: the lock (if taken) goes with it

    def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
