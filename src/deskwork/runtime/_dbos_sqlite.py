"""DBOS's queue claim on SQLite, under the database's write lock from its first read.

DBOS claims a queue's next workflows in one transaction: it counts the queue's running
workflows (its ``concurrency``) and its recent starts (its rate limiter), then marks the
next ones ``PENDING``. Its SQLite connections are in Python's ``sqlite3`` legacy transaction
mode with ``isolation_level = "IMMEDIATE"``, and that mode opens the transaction only at
the first ``INSERT``/``UPDATE``/``DELETE``: the counting ``SELECT``\\ s run before it, outside
any lock. Two workers polling at once both saw, say, 1 of 3 slots taken, and both claimed
2: 4 runs of a queue limited to 3 at once (about one test run in three). On PostgreSQL the
same claim runs in a ``REPEATABLE READ`` transaction and holds.

:func:`claim_under_write_lock` opens DBOS's claim transaction on SQLite with ``BEGIN
IMMEDIATE`` (private DBOS API: ``SQLiteSystemDatabase._begin`` is used only by the claim),
so a worker counts and claims while no other writer can claim. A poll with nothing to claim
now takes the write lock for a moment too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["claim_under_write_lock"]


def claim_under_write_lock() -> None:
    """Make DBOS's SQLite queue claim one ``BEGIN IMMEDIATE`` transaction (idempotent)."""
    try:
        from dbos._sys_db_sqlite import SQLiteSystemDatabase
    except ImportError:  # pragma: no cover - another DBOS version
        return
    if getattr(SQLiteSystemDatabase._begin, "deskwork", False):
        return

    @contextlib.contextmanager
    def begin(self: Any, isolation: str | None) -> Iterator[Any]:
        with self.engine.connect() as conn, conn.begin():
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # the legacy mode would wait for a write
            yield conn

    begin.deskwork = True  # type: ignore[attr-defined]
    setattr(SQLiteSystemDatabase, "_begin", begin)  # noqa: B010 - a method of DBOS's class
