"""A SQLite write that an exception interrupted between its ``BEGIN`` and its ``try`` (a signal
handler's, Ctrl-C's KeyboardInterrupt) leaves its transaction open; the next write must still
work, and the interrupted one must not commit with it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deskwork.core.event import new_event
from deskwork.store import SQLiteRunStore


def test_a_transaction_left_open_is_rolled_back_by_the_next_write(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.db")
    try:
        store.create_run("kept", "input")
        conn = store._db.conn
        conn.execute("BEGIN IMMEDIATE")  # as the interrupted write left it
        conn.execute("UPDATE runs SET status = 'failed' WHERE run_id = 'kept'")

        store.create_run("next", "input")  # failed: "cannot start a transaction within ..."

        record = store.get_run("kept")
        assert record is not None and record.status == "running"  # the interrupted write
        assert store.get_run("next") is not None
    finally:
        store.close()
    reopened = SQLiteRunStore(tmp_path / "runs.db")
    try:
        assert {r.run_id for r in reopened.list_runs()} == {"kept", "next"}
        record = reopened.get_run("kept")
        assert record is not None and record.status == "running"
    finally:
        reopened.close()


class _Interrupt(BaseException):
    """What a signal handler raises (as Ctrl-C's KeyboardInterrupt does)."""


class _CommitThenRaise:
    """The store's connection, whose next COMMIT succeeds and then raises, as a signal
    handler run when the call returns would."""

    def __init__(self, real: sqlite3.Connection) -> None:
        self.real, self.armed = real, False

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = self.real.execute(sql, *args)
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise _Interrupt
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_events_committed_before_an_interrupt_are_not_stored_again(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.db")
    try:
        store.create_run("r", "input")
        conn = _CommitThenRaise(store._db.conn)
        store._db.conn = conn  # type: ignore[assignment]
        first = new_event("r", "custom.a", "s", {})
        conn.armed = True
        with pytest.raises(_Interrupt):
            store.add_event(first)  # outside a loop: committed at once, then interrupted
        store.add_event(new_event("r", "custom.b", "s", {}))
        assert [e.type for e in store.get_events("r")] == ["custom.a", "custom.b"]
    finally:
        store.close()
