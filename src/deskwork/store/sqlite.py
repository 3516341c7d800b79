"""SQLite run store: the embedded default (``.deskwork/deskwork.db``).

No write transaction is ever held while a run waits on a model or a tool, so other
processes sharing the file write without waiting. Events (and the record of a starting
run, ``begin_run``) are committed in batches, one transaction per step: one added from a
running event loop is committed when that loop next gets control (when the run awaits a
model, a tool or anything else that waits), together with the others added meanwhile; one
added outside a loop is committed before the call returns. Every other write commits the
pending ones in its own transaction, and every read commits them first; a run's end
(``finish_run``: its record and its end event, one transaction) and an end event added
alone are committed before the call returns. So a reader sees a step's events before the
run waits on its next step, and a crash (``kill -9``) after a step, or after
``run``/``arun`` returned, loses nothing of it.
WAL mode with ``synchronous=NORMAL`` keeps each commit cheap (no fsync but at checkpoints).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from deskwork.core.event import RUN_END_EVENTS, Event
from deskwork.core.state import RunOwner, RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.store._blobs import (
    Fetch,
    check_text,
    pack_json,
    pack_jsonable,
    pack_model,
    unpack_json,
)
from deskwork.store._decoding import decoding
from deskwork.store._owner import current_owner
from deskwork.store._sqlite import SQLiteDatabase
from deskwork.store.base import RunStore
from deskwork.utils import utc_now

__all__ = ["SQLiteRunStore"]

# Forward migrations: append, never edit a released entry (version n = entry n - 1).
_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, status TEXT NOT NULL,"
        " input TEXT, output TEXT, output_json TEXT, created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL, state TEXT)",
        "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
        " event_id TEXT NOT NULL, run_id TEXT NOT NULL, type TEXT NOT NULL,"
        " timestamp TEXT NOT NULL, source TEXT NOT NULL, payload TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq)",
        "CREATE INDEX IF NOT EXISTS runs_updated ON runs(updated_at)",
    ],
    [
        "ALTER TABLE runs ADD COLUMN runner TEXT",
        "ALTER TABLE runs ADD COLUMN owner TEXT",
        "CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, key TEXT NOT NULL,"
        " value BLOB NOT NULL, PRIMARY KEY (thread_id, key))",
    ],
    ["CREATE TABLE IF NOT EXISTS blobs (hash TEXT PRIMARY KEY, data TEXT NOT NULL)"],
    # events.seq without AUTOINCREMENT: events are never deleted, so the largest rowid + 1
    # is as monotonic, and a commit no longer rewrites sqlite_sequence (one page fewer per
    # transaction, ~8 % of a run's SQLite time)
    [
        "CREATE TABLE events_v4 (seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL,"
        " run_id TEXT NOT NULL, type TEXT NOT NULL, timestamp TEXT NOT NULL,"
        " source TEXT NOT NULL, payload TEXT NOT NULL)",
        "INSERT INTO events_v4 (seq, event_id, run_id, type, timestamp, source, payload)"
        " SELECT seq, event_id, run_id, type, timestamp, source, payload FROM events",
        "DROP TABLE events",
        "ALTER TABLE events_v4 RENAME TO events",
        "CREATE INDEX events_run ON events(run_id, seq)",
    ],
]
SCHEMA_VERSION = len(_MIGRATIONS)
_KEY_END = "\U0010ffff"  # sorts after every character a checkpoint key can hold
_INSERT_EVENT = (
    "INSERT INTO events (event_id, run_id, type, timestamp, source, payload)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_INSERT_RUN = (
    "INSERT OR REPLACE INTO runs (run_id, status, input, created_at, updated_at, runner, owner)"
    " VALUES (?, 'running', ?, ?, ?, ?, ?)"
)
_Write = tuple[str, tuple[Any, ...]]  # a statement and its parameters
_COLUMNS = (
    "run_id, status, input, output, output_json, created_at, updated_at, {state}, runner, owner"
)


class SQLiteRunStore(RunStore):
    """Runs and events in a SQLite file. Inputs, outputs and state are stored as JSON.

    Raises:
        StoreError: when opened on a damaged file (see :class:`SQLiteDatabase`).
    """

    def __init__(self, path: str | Path) -> None:
        self._db = SQLiteDatabase(path)
        self._pending: list[_Write] = []  # run starts and events not committed yet, in order
        self._pending_blobs: dict[str, str] = {}
        self._flush_failure: Exception | None = None  # a deferred commit that failed
        self._scheduled: set[asyncio.AbstractEventLoop] = set()  # loops due to commit
        self._owner: tuple[RunOwner, str] | None = None  # current_owner() and its JSON
        try:
            self._db.migrate("runs", _MIGRATIONS)
        except BaseException:
            self._db.close()
            raise

    def _owner_json(self) -> str:
        """This process as a run owner, as stored (the JSON text kept while the owner is)."""
        owner = current_owner()
        if self._owner is None or self._owner[0] is not owner:
            self._owner = (owner, owner.model_dump_json())
        return self._owner[1]

    @property
    def path(self) -> Path:
        """The database file."""
        return self._db.path

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The connection in one transaction that first inserts the pending events."""
        with self._db.lock:
            self._raise_flush_failure()
            rows, blobs = self._pending, self._pending_blobs
            self._pending, self._pending_blobs = [], {}
            try:
                # IMMEDIATE: take the write lock first (waiting up to busy_timeout), so a
                # writer that commits meanwhile cannot make this transaction fail as stale
                with self._db.transaction(immediate=True) as conn:
                    if rows:
                        self._put_blobs(conn, blobs)
                        _execute_in_order(conn, rows)
                    yield conn
            except BaseException:
                self._pending[:0] = rows  # kept, in order, for the next commit
                self._pending_blobs.update(blobs)
                raise

    def _commit_pending(self) -> None:
        """Commit the pending run starts and events in one transaction (call under the lock)."""
        with self._write():
            pass

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, after the pending events are committed."""
        with self._db.lock:
            if self._pending:
                self._commit_pending()
            with self._db.locked() as conn:
                yield conn

    def _raise_flush_failure(self) -> None:
        failure, self._flush_failure = self._flush_failure, None
        if failure is not None:
            raise failure

    def flush(self) -> None:
        """Commit the events added but not committed yet (reads and writes do it too; the
        worker does it before it runs a tool, which may run on another thread)."""
        with self._db.lock:
            if self._pending:
                self._commit_pending()

    def _flush_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._db.lock:
            self._scheduled.discard(loop)
            if not self._pending:
                return
            try:
                self._commit_pending()
            except Exception as exc:  # the next call of this store raises it
                self._flush_failure = exc

    def _put_blobs(self, conn: Any, blobs: dict[str, str]) -> None:
        if blobs:
            conn.executemany(
                "INSERT OR IGNORE INTO blobs (hash, data) VALUES (?, ?)", list(blobs.items())
            )

    def _fetch_blobs(self, hashes: Iterable[str]) -> dict[str, str]:
        wanted = list(hashes)
        marks = ",".join("?" * len(wanted))
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT hash, data FROM blobs WHERE hash IN ({marks})", wanted
            ).fetchall()
        return {str(row[0]): str(row[1]) for row in rows}

    def begin_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        """Record a starting run: committed with its first step's events (like
        :meth:`add_event`), so before the run first waits."""
        self._add(*self._run_row(run_id, input_payload, runner))

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        (_, params), blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:  # one IMMEDIATE transaction: check and insert together
            self._put_blobs(conn, blobs)
            cursor = conn.execute(_INSERT_RUN.replace("OR REPLACE", "OR IGNORE", 1), params)
            return cursor.rowcount == 1

    def create_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        row, blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:
            self._put_blobs(conn, blobs)  # before the row: a crash leaves no dangling reference
            conn.execute(*row)

    def _run_row(
        self, run_id: str, input_payload: Any, runner: str | None
    ) -> tuple[_Write, dict[str, str]]:
        now = utc_now().isoformat()
        owner = self._owner_json()
        blobs: dict[str, str] = {}
        stored_input = pack_jsonable(input_payload, blobs)
        return (_INSERT_RUN, (run_id, stored_input, now, now, runner, owner)), blobs

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        blobs: dict[str, str] = {}
        update = _update_run(run_id, status, output, output_json, state, blobs)
        with self._write() as conn:
            self._put_blobs(conn, blobs)
            cursor = conn.execute(*update)
        if cursor.rowcount == 0:
            raise KeyError(f"unknown run {run_id!r}")

    def finish_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
        end_event: Event,
    ) -> None:
        """Store the record and the end event in one transaction, with the pending events
        before them."""
        blobs: dict[str, str] = {}
        update = _update_run(run_id, status, output, output_json, state, blobs)
        event = _event_row(end_event, blobs)
        with self._write() as conn:
            self._put_blobs(conn, blobs)
            if conn.execute(*update).rowcount == 0:  # rolled back: nothing of it stored
                raise KeyError(f"unknown run {run_id!r}")
            conn.execute(_INSERT_EVENT, event)

    def claim_paused(self, run_id: str) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET status='running', updated_at=?, owner=?"
                " WHERE run_id=? AND status='paused'",
                (utc_now().isoformat(), self._owner_json(), run_id),
            )
        return cursor.rowcount == 1

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS.format(state='state')} FROM runs WHERE run_id=?",
                (run_id,),
            ).fetchone()
        with self._decoding(f"run {run_id}"):
            return _record(row, self._fetch_blobs) if row else None

    def list_runs(
        self,
        limit: int = 20,
        *,
        status: str | None = None,
        runner: str | None = None,
        since: datetime | None = None,
    ) -> list[RunRecord]:
        clauses: list[str] = []
        params: list[Any] = []
        for clause, value in (
            ("status=?", status),
            ("runner=?", runner),
            ("updated_at>=?", since.astimezone(utc_now().tzinfo).isoformat() if since else None),
        ):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS.format(state='NULL')} FROM runs{where}"
                " ORDER BY updated_at DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
        with self._decoding("a run record"):
            return [_record(row, self._fetch_blobs) for row in rows]

    def add_event(self, event: Event) -> None:
        """Store ``event``: committed now outside an event loop or when it ends a run, else
        when the loop next gets control (see the module docstring), in order either way."""
        blobs: dict[str, str] = {}
        row = _event_row(event, blobs)
        self._add((_INSERT_EVENT, row), blobs, now=event.type in RUN_END_EVENTS)

    def _add(self, write: _Write, blobs: dict[str, str], *, now: bool = False) -> None:
        """Commit ``write`` now outside an event loop (or if ``now``), else when the loop
        next gets control."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._db.lock:
            self._pending.append(write)
            if blobs:
                self._pending_blobs.update(blobs)
            if loop is None or now:
                self._commit_pending()
                return
            if loop in self._scheduled:
                return
            self._scheduled.add(loop)
        loop.call_soon(self._flush_soon, loop)

    def get_events(self, run_id: str) -> list[Event]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT event_id, type, timestamp, run_id, source, payload FROM events"
                " WHERE run_id=? ORDER BY seq",
                (run_id,),
            ).fetchall()
        with self._decoding(f"an event of run {run_id}"):
            return [
                Event(
                    event_id=row[0],
                    type=row[1],
                    timestamp=datetime.fromisoformat(row[2]),
                    run_id=row[3],
                    source=row[4],
                    payload=unpack_json(row[5], self._fetch_blobs),
                )
                for row in rows
            ]

    def _decoding(self, what: str) -> AbstractContextManager[None]:
        """A stored value damaged in place (the file itself sound) is a StoreError too."""
        return decoding(what, self._db.damaged)

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        rows = [(thread_id, key, bytes(value)) for key, value in items]
        with self._write() as conn:
            conn.executemany(
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
        with self._read() as conn:
            rows = conn.execute(
                "SELECT key, value FROM checkpoints WHERE thread_id=? AND key>=? AND key<?"
                f" ORDER BY key {order} LIMIT ?",
                (thread_id, prefix, prefix + _KEY_END, -1 if limit is None else limit),
            ).fetchall()
        return [(row[0], bytes(row[1])) for row in rows]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM checkpoints WHERE thread_id=?", (thread_id,))

    def close(self) -> None:
        try:
            if self._pending:
                self.flush()
        finally:
            self._db.close()


def _update_run(
    run_id: str,
    status: RunStatus,
    output: str | None,
    output_json: Any | None,
    state: RunState | None,
    blobs: dict[str, str],
) -> _Write:
    """The statement that stores a run's status, output and state (large values in ``blobs``)."""
    values = (check_text(output), pack_jsonable(output_json, blobs), pack_model(state, blobs))
    return (
        "UPDATE runs SET status=?, output=?, output_json=?, state=?, updated_at=? WHERE run_id=?",
        (status, *values, utc_now().isoformat(), run_id),
    )


def _event_row(event: Event, blobs: dict[str, str]) -> tuple[Any, ...]:
    """The parameters of ``_INSERT_EVENT`` for ``event`` (a large payload in ``blobs``)."""
    return (
        event.event_id,
        event.run_id,
        str(event.type),
        event.timestamp.isoformat(),
        event.source,
        pack_json(event.payload, blobs),
    )


def _record(row: Sequence[Any], fetch: Fetch) -> RunRecord:
    state = unpack_json(row[7], fetch)
    return RunRecord(
        run_id=row[0],
        status=row[1],
        input=unpack_json(row[2], fetch),
        output=row[3],
        output_json=unpack_json(row[4], fetch),
        created_at=datetime.fromisoformat(row[5]),
        updated_at=datetime.fromisoformat(row[6]),
        state=RunState.model_validate(state) if state is not None else None,
        runner=row[8],
        owner=RunOwner.model_validate_json(row[9]) if row[9] else None,
    )


def _execute_in_order(conn: sqlite3.Connection, writes: list[_Write]) -> None:
    """Run ``writes`` in order, each run of one statement as one ``executemany``."""
    start = 0
    for end in range(1, len(writes) + 1):
        if end == len(writes) or writes[end][0] != writes[start][0]:
            conn.executemany(writes[start][0], [params for _, params in writes[start:end]])
            start = end
