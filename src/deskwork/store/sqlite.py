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
WAL mode with ``synchronous=NORMAL`` keeps each commit cheap: no fsync but at checkpoints.
That loses nothing when the process dies (``kill -9``, a crash): a commit is in the WAL file,
in the operating system's cache, when ``COMMIT`` returns, and the next connection replays it;
only a power loss or an OS crash can take back the last commits (never corrupting the file).

The events a transaction stores for a run are one row of ``event_batches`` (a JSON array of
``[event_id, type, timestamp, source, payload]``), two rows for a typical run instead of one
row and one index entry per event: most of a run's SQLite cost was the pages those wrote.
A payload that may hold non-finite floats (JSON as Python writes it, not as SQLite reads it)
is kept in its batch as a JSON text of its own. A batch's ``seq`` is the position of its last
event in the log, so the ``events`` view gives SQL readers one row per event as before
(``seq``, ``event_id``, ``run_id``, ``type``, ``timestamp``, ``source``, ``payload``);
timestamps in UTC are written ``...Z`` (``datetime.fromisoformat`` reads both forms).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from deskwork.core.event import RUN_END_EVENTS, Event
from deskwork.core.state import RunOwner, RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.exceptions import RunNotRunningError
from deskwork.store._blobs import (
    Fetch,
    check_text,
    is_plain_json,
    pack_json,
    pack_jsonable,
    pack_model,
    packs_unchanged,
    pauses_at,
    unpack_json,
    unpack_value,
)
from deskwork.store._decoding import decoding
from deskwork.store._errors import check_event_keys, check_keys
from deskwork.store._owner import current_owner
from deskwork.store._sqlite import SQLiteDatabase, sendable
from deskwork.store.base import (
    IF_ENDABLE_SQL,
    STATUS_BY_END,
    RunStore,
    check_limit,
    listing_since,
    raise_if_refused,
)
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
    # one row per run and transaction (see the module docstring); a payload SQLite's JSON
    # functions refuse (or, from 3.42, read as JSON5) is kept as a text: non-finite floats
    # (Python's JSON has them) read back as written, a damaged payload reads as damaged
    [
        "CREATE TABLE event_batches (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL,"
        " events TEXT NOT NULL)",
        "INSERT INTO event_batches (seq, run_id, events) SELECT seq, run_id,"
        " json_array(json_array(event_id, type, timestamp, source, CASE WHEN json_valid(payload)"
        " AND instr(payload, 'NaN') = 0 AND instr(payload, 'Infinity') = 0"
        " THEN json(payload) ELSE payload END)) FROM events",
        "DROP TABLE events",
        "CREATE INDEX event_batches_run ON event_batches(run_id)",
        "CREATE VIEW events (seq, event_id, run_id, type, timestamp, source, payload) AS"
        " SELECT b.seq - json_array_length(b.events) + 1 + e.key, json_extract(e.value, '$[0]'),"
        " b.run_id, json_extract(e.value, '$[1]'), json_extract(e.value, '$[2]'),"
        " json_extract(e.value, '$[3]'), json_extract(e.value, '$[4]')"
        " FROM event_batches AS b, json_each(b.events) AS e",
    ],
]
SCHEMA_VERSION = len(_MIGRATIONS)
_KEY_END = "\U0010ffff"  # sorts after every character a checkpoint key can hold
_INSERT_BATCH = (  # its seq: the last event's position, after the events stored before;
    # not if the run is there but not running (nor of the status the batch may also find):
    # then its events are NULL, which OR IGNORE skips (the only constraint it can break, seq
    # being new under the write lock). One VALUES row, as fast as without the condition: an
    # INSERT ... SELECT that reads event_batches goes through a temporary table (+3 us)
    "INSERT OR IGNORE INTO event_batches (seq, run_id, events)"
    " VALUES ((SELECT coalesce(max(seq), 0) FROM event_batches) + ?1, ?3, CASE WHEN EXISTS"
    " (SELECT 1 FROM runs WHERE run_id = ?3 AND status NOT IN ('running', ?4)) THEN NULL"
    " ELSE ?2 END)"
)
_INSERT_AFTER_END = (  # a batch of its own, only if the run is finished
    "INSERT INTO event_batches (seq, run_id, events)"
    " SELECT (SELECT coalesce(max(seq), 0) FROM event_batches) + 1, ?2, ?1"
    " WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?2 AND status IN ('completed', 'failed'))"
)
_INSERT_RUN = (
    "INSERT OR REPLACE INTO runs (run_id, status, input, created_at, updated_at, runner, owner)"
    " VALUES (?, 'running', ?, ?, ?, ?, ?)"
)
_RESERVE_RUN = _INSERT_RUN.replace("OR REPLACE", "OR IGNORE", 1)
_Write = tuple[str, tuple[Any, ...]]  # a statement and its parameters
_End = tuple[str, str, str]  # a run's end event: run id, encoded, status it may also find
_PACKED = "\\u0000"  # in a batch's text when a payload holds a blob reference or an escape
_Batch = tuple[int, str, str, str]  # _INSERT_BATCH's parameters
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
        self._pending_runs: list[tuple[Any, ...]] = []  # run starts not committed yet
        self._pending_events: dict[str, list[str]] = {}  # by run, in order, encoded
        self._pending_blobs: dict[str, str] = {}
        self._flush_failure: Exception | None = None  # a deferred commit that failed
        self._refused_runs: set[str] = set()  # runs whose events a deferred commit refused
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
    def _write(self, end: _End | None = None) -> Iterator[sqlite3.Connection]:
        """The connection in one transaction that first stores the pending run starts and
        events, and ``end`` (a run's end event) after them: in its run's batch when it may
        find the run ``paused`` (``finish_run``, whose update decides), else alone. The
        runs whose events were refused (not ``running``) are in ``_refused_runs`` afterwards."""
        with self._db.lock:
            self._db.check_open()  # not a commit failure kept from before the close
            self._raise_flush_failure()
            runs, events, blobs = self._pending_runs, self._pending_events, self._pending_blobs
            self._pending_runs, self._pending_events, self._pending_blobs = [], {}, {}
            refused: list[str] = []
            try:
                # IMMEDIATE: take the write lock first (waiting up to busy_timeout), so a
                # writer that commits meanwhile cannot make this transaction fail as stale
                with self._db.transaction(immediate=True) as conn:
                    self._put_blobs(conn, blobs)
                    if runs:
                        conn.executemany(_INSERT_RUN, runs)
                    if events or end:
                        batches = _batches(events, end)
                        if conn.executemany(_INSERT_BATCH, batches).rowcount < len(batches):
                            refused = _refusals(conn, batches)  # rare: look which
                    yield conn
            except BaseException:
                if not self._db.committed():
                    self._keep_pending(runs, events, blobs)
                else:  # raised after the COMMIT (a signal handler's): stored, not again
                    self._refused_runs.update(refused)
                raise
            self._refused_runs.update(refused)

    def _keep_pending(
        self, runs: list[tuple[Any, ...]], events: dict[str, list[str]], blobs: dict[str, str]
    ) -> None:
        """Put back what a failed commit took (call under the lock), before anything newer."""
        self._pending_runs[:0] = runs
        for run_id, items in self._pending_events.items():
            events.setdefault(run_id, []).extend(items)
        self._pending_events = events
        self._pending_blobs.update(blobs)

    def _commit_pending(self) -> None:
        """Commit the pending run starts and events in one transaction (call under the lock)."""
        with self._write():
            pass

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, after the pending events are committed."""
        with self._db.lock:
            if self._pending_runs or self._pending_events:
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
            self._db.check_open()
            if self._pending_runs or self._pending_events:
                self._commit_pending()

    def _flush_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._db.lock:
            self._scheduled.discard(loop)
            if self._db.closed or not (self._pending_runs or self._pending_events):
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
        row, blobs = self._run_row(run_id, input_payload, runner)
        with self._db.lock:
            self._db.check_open()  # else kept for a commit that never comes
            self._pending_runs.append(row)
            self._commit_soon(blobs)

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        row, blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:  # one IMMEDIATE transaction: check and insert together
            self._put_blobs(conn, blobs)
            return conn.execute(_RESERVE_RUN, row).rowcount == 1

    def create_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        row, blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:
            self._put_blobs(conn, blobs)  # before the row: a crash leaves no dangling reference
            conn.execute(_INSERT_RUN, row)

    def _run_row(
        self, run_id: str, input_payload: Any, runner: str | None
    ) -> tuple[tuple[Any, ...], dict[str, str]]:
        """The parameters of ``_INSERT_RUN`` for a new run (a large input in the blobs)."""
        check_keys(str(self.path), run_id, runner)
        now = utc_now().isoformat()
        owner = self._owner_json()
        blobs: dict[str, str] = {}
        stored_input = pack_jsonable(input_payload, blobs)
        return (run_id, stored_input, now, now, runner, owner), blobs

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        if self._db.unknown(run_id):  # no stored run has one (sqlite3 cannot send a surrogate)
            raise KeyError(f"unknown run {run_id!r}")
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
        if self._db.unknown(run_id):  # no stored run has one
            raise KeyError(f"unknown run {run_id!r}")
        e = end_event
        check_event_keys(str(self.path), e.event_id, e.type, e.run_id, e.source)
        blobs: dict[str, str] = {}
        sql, params = _update_run(run_id, status, output, output_json, state, blobs)
        end = (end_event.run_id, _event_item(end_event, blobs), "paused")
        with self._db.lock:
            raise_if_refused(self._refused_runs, run_id)
            try:
                with self._write(end) as conn:
                    self._put_blobs(conn, blobs)
                    if conn.execute(sql + IF_ENDABLE_SQL, params).rowcount == 0:  # rolled back
                        _raise_unended(conn, run_id)
            except RunNotRunningError:
                # the rollback put the run's events back, which a later commit would refuse
                # (its record is ended) and note for a run that has been told and writes no more
                self._pending_events.pop(run_id, None)
                raise

    def claim_paused(self, run_id: str, action_id: str | None = None) -> bool:
        if self._db.unknown(run_id):
            return False
        with self._write() as conn:  # (IMMEDIATE: no other claim between the read and write)
            if action_id is not None:
                row = conn.execute("SELECT state FROM runs WHERE run_id=?", (run_id,)).fetchone()
                if row is None or not pauses_at(row[0], action_id):
                    return False
            cursor = conn.execute(
                "UPDATE runs SET status='running', updated_at=?, owner=?"
                " WHERE run_id=? AND status='paused'",
                (utc_now().isoformat(), self._owner_json(), run_id),
            )
        return cursor.rowcount == 1

    def get_run(self, run_id: str) -> RunRecord | None:
        if self._db.unknown(run_id):  # an id from outside (GET /runs/{id}): not found
            return None
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS.format(state='state')} FROM runs WHERE run_id=?",
                (run_id,),
            ).fetchone()
        with self._decoding(f"run {run_id}"):
            return _record(row, self._fetch_blobs) if row else None

    def list_runs(
        self,
        limit: int | None = 20,
        *,
        status: str | None = None,
        runner: str | None = None,
        since: datetime | None = None,
    ) -> list[RunRecord]:
        check_limit(limit)  # (SQLite reads a negative LIMIT as none)
        since = listing_since(since)
        if self._db.unknown(runner or "", status or ""):
            return []
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
                (*params, -1 if limit is None else limit),
            ).fetchall()
        with self._decoding("a run record"):
            return [_record(row, self._fetch_blobs) for row in rows]

    def add_event(self, event: Event) -> None:
        """Store ``event``: committed now outside an event loop or when it ends a run, else
        when the loop next gets control (see the module docstring), in order either way;
        only while its run is running (:class:`RunStore`; one refused in a later commit
        makes the run's next write raise)."""
        blobs: dict[str, str] = {}
        item = _event_item(event, blobs)
        run_id = event.run_id
        # kept in the batch's JSON, but refused as PostgreSQL does (each a text column there)
        check_event_keys(str(self.path), event.event_id, event.type, run_id, event.source)
        with self._db.lock:
            self._db.check_open()  # else kept for a commit that never comes
            if self._refused_runs:
                raise_if_refused(self._refused_runs, run_id)
            if event.type in RUN_END_EVENTS:  # committed now, in a batch of its own
                self._pending_blobs.update(blobs)
                self._add_end(run_id, item, STATUS_BY_END[event.type])
                return
            pending = self._pending_events.get(run_id)
            if pending is None:
                self._pending_events[run_id] = [item]
            else:
                pending.append(item)
            self._commit_soon(blobs)
            if self._refused_runs:  # committed now (outside a loop) and refused
                raise_if_refused(self._refused_runs, run_id)

    def _add_end(self, run_id: str, item: str, status: str) -> None:
        """Store an end event added alone: while the run is running or has its status."""
        with self._write((run_id, item, status)):
            pass
        raise_if_refused(self._refused_runs, run_id)

    def _commit_soon(self, blobs: dict[str, str]) -> None:
        """Commit what is pending now outside an event loop, else when the loop next gets
        control (call under the lock, after adding to it)."""
        if blobs:
            self._pending_blobs.update(blobs)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            self._commit_pending()
        elif loop not in self._scheduled:
            self._scheduled.add(loop)
            loop.call_soon(self._flush_soon, loop)

    def add_event_after_end(self, event: Event) -> bool:
        """Store ``event`` after its finished run's end (see :class:`RunStore`), committed
        before the call returns."""
        blobs: dict[str, str] = {}
        item = _event_item(event, blobs)
        run_id = event.run_id
        check_event_keys(str(self.path), event.event_id, event.type, run_id, event.source)
        with self._write() as conn:
            self._put_blobs(conn, blobs)
            cursor = conn.execute(_INSERT_AFTER_END, (f"[{item}]", run_id))
        return cursor.rowcount == 1

    def get_events(self, run_id: str) -> list[Event]:
        if self._db.unknown(run_id):
            return []
        with self._read() as conn:
            rows = conn.execute(
                "SELECT events FROM event_batches WHERE run_id=? ORDER BY seq", (run_id,)
            ).fetchall()
        with self._decoding(f"an event of run {run_id}"):
            return [event for (text,) in rows for event in _events(run_id, text, self._fetch_blobs)]

    def _decoding(self, what: str) -> AbstractContextManager[None]:
        """A stored value damaged in place (the file itself sound) is a StoreError too."""
        return decoding(what, self._db.damaged)

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        rows = [(thread_id, key, bytes(value)) for key, value in items]
        check_keys(str(self.path), thread_id, *(key for _, key, _ in rows))
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
        check_limit(limit)
        if self._db.unknown(thread_id, prefix):  # no stored one has it
            return []
        order = "DESC" if newest_first else "ASC"
        with self._read() as conn:
            rows = conn.execute(
                "SELECT key, value FROM checkpoints WHERE thread_id=? AND key>=? AND key<?"
                f" ORDER BY key {order} LIMIT ?",
                (thread_id, prefix, prefix + _KEY_END, -1 if limit is None else limit),
            ).fetchall()
        return [(row[0], bytes(row[1])) for row in rows]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        if self._db.unknown(thread_id):
            return
        with self._write() as conn:
            conn.execute("DELETE FROM checkpoints WHERE thread_id=?", (thread_id,))

    def close(self) -> None:
        """Commit what is pending, then close; every later call raises :class:`StoreError`,
        and a second ``close()`` does nothing (nor after a commit here that failed)."""
        with self._db.lock:
            if self._db.closed:
                return
            try:
                if self._pending_runs or self._pending_events:
                    self._commit_pending()
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
    text = check_text(output)
    stored = None if text is None else sendable(text)  # a lone surrogate: a BLOB (_record)
    values = (stored, pack_jsonable(output_json, blobs), pack_model(state, blobs))
    return (
        "UPDATE runs SET status=?, output=?, output_json=?, state=?, updated_at=? WHERE run_id=?",
        (status, *values, utc_now().isoformat(), run_id),
    )


def _event_item(event: Event, blobs: dict[str, str]) -> str:
    """``event`` as an element of its batch: the JSON array ``[event_id, type, timestamp,
    source, payload]`` (a large payload text in ``blobs``; the timestamp in ISO 8601, by
    pydantic-core's faster encoder, which writes UTC as ``Z``, unless its offset has
    seconds, which that encoder drops)."""
    at = event.timestamp
    stamp = at if at.tzinfo is UTC or _whole_minutes(at) else at.isoformat()
    head = [event.event_id, str(event.type), stamp, event.source]
    if is_plain_json(event.payload):  # the common case: one encoder call for it all
        text = _encode([*head, event.payload])
        if packs_unchanged(text):  # the payload's text is the one pack_json would store
            return text
    payload = pack_json(event.payload, blobs) or "null"
    if "NaN" in payload or "Infinity" in payload:  # maybe non-finite floats, which Python's
        return _encode([*head, payload])  # JSON writes but SQLite's refuses: kept as a text
    return f"{_encode(head)[:-1]},{payload}]"


def _payload(stored: Any, fetch: Fetch) -> Any:
    """A payload as stored in its batch: JSON, or a JSON text of its own (see _event_item)."""
    return unpack_json(stored, fetch) if type(stored) is str else unpack_value(stored, fetch)


def _whole_minutes(at: datetime) -> bool:
    """Whether ``at`` is naive or its UTC offset is a whole number of minutes."""
    offset = at.utcoffset()
    return offset is None or not (offset.seconds % 60 or offset.microseconds)


def _encode(values: list[Any]) -> str:
    """JSON text of ``values`` (texts, a datetime, plain JSON) by pydantic-core's encoder."""
    try:
        return to_json(values).decode()
    except PydanticSerializationError:  # a lone surrogate, which json.dumps escapes
        return json.dumps(values, default=datetime.isoformat)


def _batches(events: dict[str, list[str]], end: _End | None) -> list[_Batch]:
    """The parameters of ``_INSERT_BATCH``: one batch per run, ``end`` last in its run's if
    it may find its run ``paused`` (``finish_run``'s), else a batch of its own after them."""
    alone: list[_Batch] = []
    ending = None
    if end is not None:
        ending, item, status = end
        if status == "paused":
            events = {**events, ending: [*events.get(ending, ()), item]}
        else:
            alone, ending = [(1, f"[{item}]", ending, status)], None
    batches = [(len(items), f"[{','.join(items)}]", run_id,
                "paused" if run_id == ending else "running")
               for run_id, items in events.items()]  # fmt: skip
    return batches + alone


def _refusals(conn: sqlite3.Connection, batches: list[_Batch]) -> list[str]:
    """The runs of ``batches`` that ``_INSERT_BATCH`` refused (in its transaction)."""
    wanted = {run_id for _, _, run_id, _ in batches}
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(f"SELECT run_id, status FROM runs WHERE run_id IN ({marks})", [*wanted])
    found = dict(rows.fetchall())
    allowed = (None, "running")  # no record, or a running one
    return [run_id for _, _, run_id, also in batches if found.get(run_id) not in (*allowed, also)]


def _raise_unended(conn: sqlite3.Connection, run_id: str) -> None:
    """Why ``finish_run`` updated no record: no such run, or one not running nor paused."""
    if conn.execute("SELECT 1 FROM runs WHERE run_id=?", (run_id,)).fetchone() is None:
        raise KeyError(f"unknown run {run_id!r}")
    raise RunNotRunningError(run_id)


def _events(run_id: str, text: str, fetch: Fetch) -> list[Event]:
    """The events of a stored batch (a ``ValueError`` if it is damaged)."""
    items = json.loads(text)
    packed = _PACKED in text  # else no payload holds a blob reference or an escaped text
    if type(items) is not list:
        raise ValueError("a batch of events is not a JSON array")
    events: list[Event] = []
    for item in items:
        if type(item) is not list or len(item) != 5 or type(item[2]) is not str:
            raise ValueError("an event is not [event_id, type, timestamp, source, payload]")
        event_id, kind, timestamp, source, payload = item
        events.append(
            Event(
                event_id=event_id,
                type=kind,
                timestamp=datetime.fromisoformat(timestamp),
                run_id=run_id,
                source=source,
                payload=_payload(payload, fetch) if packed or type(payload) is str else payload,
            )
        )
    return events


def _record(row: Sequence[Any], fetch: Fetch) -> RunRecord:
    state = unpack_json(row[7], fetch)
    return RunRecord(
        run_id=row[0],
        status=row[1],
        input=unpack_json(row[2], fetch),
        output=row[3].decode("utf-8", "surrogatepass") if type(row[3]) is bytes else row[3],
        output_json=unpack_json(row[4], fetch),
        created_at=datetime.fromisoformat(row[5]),
        updated_at=datetime.fromisoformat(row[6]),
        state=RunState.model_validate(state) if state is not None else None,
        runner=row[8],
        owner=RunOwner.model_validate_json(row[9]) if row[9] else None,
    )
