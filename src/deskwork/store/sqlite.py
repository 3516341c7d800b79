"""SQLite run store: the embedded default (``.deskwork/deskwork.db``)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import weakref
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from deskwork.core.event import Event
from deskwork.core.state import RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.store._sqlite import SQLiteDatabase
from deskwork.store.base import RunStore
from deskwork.utils import to_jsonable, utc_now

__all__ = ["SQLiteRunStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, status TEXT NOT NULL, input TEXT, output TEXT,
    output_json TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, state TEXT
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, run_id TEXT NOT NULL,
    type TEXT NOT NULL, timestamp TEXT NOT NULL, source TEXT NOT NULL, payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq);
CREATE INDEX IF NOT EXISTS runs_updated ON runs(updated_at);
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (thread_id, key)
);
"""
_KEY_END = "\U0010ffff"  # sorts after every character a checkpoint key can hold

# Events are written inside an open transaction that is committed at every run status
# change, and at most this many seconds after the first uncommitted event. A background
# flusher enforces the bound even when no further event comes (a run waiting on a model or a
# slow tool), so other connections and processes never wait long for the write lock.
_COMMIT_INTERVAL = 0.05


class SQLiteRunStore(RunStore):
    """Runs and events in a SQLite file. Inputs, outputs and state are stored as JSON."""

    def __init__(self, path: str | Path) -> None:
        self._db = SQLiteDatabase(path)
        self._dirty_since: float | None = None
        self._flush_due = threading.Event()
        self._flusher: threading.Thread | None = None
        with self._db.lock:
            self._db.conn.executescript(_SCHEMA)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._db.path

    def _begin(self) -> None:
        if self._dirty_since is None:
            self._db.conn.execute("BEGIN")
            self._dirty_since = time.monotonic()
            self._flush_due.set()
            if self._flusher is None:
                self._flusher = threading.Thread(
                    target=_flush_loop,
                    args=(weakref.ref(self), self._flush_due),
                    name="deskwork-sqlite-flush",
                    daemon=True,
                )
                self._flusher.start()

    def _commit(self) -> None:
        if self._dirty_since is not None:
            self._db.conn.execute("COMMIT")
            self._dirty_since = None

    def create_run(self, run_id: str, input_payload: Any) -> None:
        now = utc_now().isoformat()
        with self._db.lock:
            self._begin()
            self._db.conn.execute(
                "INSERT OR REPLACE INTO runs (run_id, status, input, created_at, updated_at)"
                " VALUES (?, 'running', ?, ?, ?)",
                (run_id, _dumps(input_payload), now, now),
            )
            self._commit()

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        state_json = state.model_dump_json() if state is not None else None
        with self._db.lock:
            self._begin()
            cursor = self._db.conn.execute(
                "UPDATE runs SET status=?, output=?, output_json=?, state=?, updated_at=?"
                " WHERE run_id=?",
                (status, output, _dumps(output_json), state_json, utc_now().isoformat(), run_id),
            )
            self._commit()
        if cursor.rowcount == 0:
            raise KeyError(f"unknown run {run_id!r}")

    def claim_paused(self, run_id: str) -> bool:
        with self._db.lock:
            self._begin()
            cursor = self._db.conn.execute(
                "UPDATE runs SET status='running', updated_at=? WHERE run_id=? AND status='paused'",
                (utc_now().isoformat(), run_id),
            )
            self._commit()
        return cursor.rowcount == 1

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._db.lock:
            row = self._db.conn.execute(
                "SELECT run_id, status, input, output, output_json, created_at, updated_at, state"
                " FROM runs WHERE run_id=?",
                (run_id,),
            ).fetchone()
        return _record(row) if row else None

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT run_id, status, input, output, output_json, created_at, updated_at, NULL"
                " FROM runs ORDER BY updated_at DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [_record(row) for row in rows]

    def add_event(self, event: Event) -> None:
        payload = json.dumps(event.payload, default=str)
        with self._db.lock:
            self._begin()
            self._db.conn.execute(
                "INSERT INTO events (event_id, run_id, type, timestamp, source, payload)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    event.event_id,
                    event.run_id,
                    str(event.type),
                    event.timestamp.isoformat(),
                    event.source,
                    payload,
                ),
            )
            if self._dirty_since is not None and (
                time.monotonic() - self._dirty_since > _COMMIT_INTERVAL
            ):
                self._commit()

    def get_events(self, run_id: str) -> list[Event]:
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT event_id, type, timestamp, run_id, source, payload FROM events"
                " WHERE run_id=? ORDER BY seq",
                (run_id,),
            ).fetchall()
        return [
            Event(
                event_id=row[0],
                type=row[1],
                timestamp=datetime.fromisoformat(row[2]),
                run_id=row[3],
                source=row[4],
                payload=json.loads(row[5]),
            )
            for row in rows
        ]

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        rows = [(thread_id, key, bytes(value)) for key, value in items]
        with self._db.lock:
            self._begin()  # committed with the run's next status change, or within 50 ms
            self._db.conn.executemany(
                f"{verb} INTO checkpoints (thread_id, key, value) VALUES (?, ?, ?)", rows
            )

    def get_checkpoint_items(
        self,
        thread_id: str,
        prefix: str = "",
        *,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[tuple[str, bytes]]:
        order = "DESC" if newest_first else "ASC"
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT key, value FROM checkpoints WHERE thread_id=? AND key>=? AND key<?"
                f" ORDER BY key {order} LIMIT ?",
                (thread_id, prefix, prefix + _KEY_END, -1 if limit is None else limit),
            ).fetchall()
        return [(row[0], bytes(row[1])) for row in rows]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        with self._db.lock:
            self._begin()
            self._db.conn.execute("DELETE FROM checkpoints WHERE thread_id=?", (thread_id,))
            self._commit()

    def flush(self) -> None:
        with self._db.lock:
            self._commit()

    def close(self) -> None:
        self.flush()
        self._db.close()


def _flush_loop(ref: weakref.ref[SQLiteRunStore], due: threading.Event) -> None:
    """Commit each open transaction ``_COMMIT_INTERVAL`` after it began; exit with the store."""
    while True:
        if not due.wait(timeout=1.0):
            if ref() is None:
                return
            continue
        due.clear()
        time.sleep(_COMMIT_INTERVAL)
        store = ref()
        if store is None:
            return
        try:
            store.flush()
        except sqlite3.ProgrammingError:  # closed meanwhile
            return
        del store


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(to_jsonable(value), default=str)


def _record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord(
        run_id=row[0],
        status=row[1],
        input=json.loads(row[2]) if row[2] else None,
        output=row[3],
        output_json=json.loads(row[4]) if row[4] else None,
        created_at=datetime.fromisoformat(row[5]),
        updated_at=datetime.fromisoformat(row[6]),
        state=RunState.model_validate_json(row[7]) if row[7] else None,
    )
