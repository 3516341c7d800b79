"""A SQLite write that an exception interrupted between its ``BEGIN`` and its ``try`` (a signal
handler's, Ctrl-C's KeyboardInterrupt) leaves its transaction open; the next write must still
work, and the interrupted one must not commit with it."""

from __future__ import annotations

from pathlib import Path

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
