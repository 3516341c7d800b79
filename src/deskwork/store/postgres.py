"""PostgreSQL run and session stores (the ``postgres`` extra: psycopg 3 and psycopg-pool).

All stores of one URL share one connection pool (:class:`PostgresDatabase`). Tables are
named ``deskwork_*`` so they can live beside other applications' tables (DBOS's included);
``deskwork_schema`` records each component's schema version, and opening a store applies
the forward migrations it lacks (under an advisory lock, so concurrent processes migrate
once).

Events (and the record of a starting run, ``begin_run``) are committed in batches, like the
SQLite store's: one added from a running event loop is committed by the store's writer
thread at once, together with the others added meanwhile, so the loop never waits on a
commit. One added outside a loop, a run's end event (``run.completed``, ``run.failed``,
``run.paused``: its caller may go on or be killed at once), and a run's end stored by
``finish_run`` (its record and end event in one transaction) are committed before the call
returns. :meth:`flush` (the worker calls it
before every tool call), every read and every other write first wait for the pending ones
to be committed, in order (a background commit that failed is tried again then, and raises
if it fails again). So a reader sees a step's events; a tool runs only once the turn before
it is on disk; a crash (``kill -9``) after ``run``/``arun`` returned loses nothing of the
run, and one during a run only the last events whose commit had not ended (a recovered
durable run emits those again). Every other write is committed before its call returns.

A durable run whose DBOS system tables are in the same database saves those commits'
round trips (:meth:`PostgresRunStore.carried`): its events wait for the run's next DBOS
checkpoint (a step's check before it runs, or its recorded result), which is sent in the
same round trip and transaction as them (:meth:`PostgresRunStore.commit_with`), or for the
writer thread after :data:`CARRY_SECONDS` when no checkpoint comes first; the worker's flush
before a tool call is the tool step's own check then. So a step's checkpoint never lands
without the events emitted before it.

Use it through one URL::

    Desk(database_url="postgresql://user:password@host:5432/dbname")
    # or: DESKWORK_DATABASE_URL=postgresql://... in the environment
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import select
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from deskwork._extras import require
from deskwork._logs import get_stdlib_logger
from deskwork.core.event import RUN_END_EVENTS, Event
from deskwork.core.message import Message
from deskwork.core.state import RunOwner, RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.exceptions import ConfigurationError, RunNotRunningError
from deskwork.store._blobs import (
    Fetch,
    dump_model,
    escape_text,
    load_model,
    pack_json,
    pauses_at,
    unescape_text,
    unpack_json,
)
from deskwork.store._decoding import decoding
from deskwork.store._errors import (
    StoreError,
    check_event_keys,
    check_keys,
    closed_store,
    refused_value,
    unstorable_text,
)
from deskwork.store._owner import current_owner
from deskwork.store._url import redact_url, scrub
from deskwork.store.base import (
    IF_ENDABLE_SQL,
    STATUS_BY_END,
    RunStore,
    check_limit,
    listing_since,
    raise_if_refused,
)
from deskwork.store.session import SessionRecord, SessionStore
from deskwork.utils import new_id, to_jsonable, utc_now

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = [
    "CARRY_SECONDS",
    "PostgresDatabase",
    "PostgresRunStore",
    "PostgresSessionStore",
    "carrier",
]

CARRY_SECONDS = 0.1
"""How long the events of a durable run wait for the run's next DBOS checkpoint to carry
them (:meth:`PostgresRunStore.carried`) before the writer thread commits them anyway."""
_carrier: contextvars.ContextVar[tuple[PostgresRunStore, Callable[[], bool]] | None] = (
    contextvars.ContextVar("deskwork_pg_carrier", default=None)
)


def carrier() -> PostgresRunStore | None:
    """The run store whose pending writes this task's DBOS checkpoints carry
    (:meth:`PostgresRunStore.carried`), if any."""
    carried = _carrier.get()
    return None if carried is None else carried[0]


_MIGRATION_LOCK = 0x6465736B776F726B  # "deskwork": serializes schema migrations
_SCHEMA_TABLE = (
    "CREATE TABLE IF NOT EXISTS deskwork_schema"
    " (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


@contextmanager
def _piped(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """A transaction sent as one pipeline: BEGIN, the block's statements, COMMIT, one Sync.

    Leaving the pipeline sends its Sync, which runs what was queued: after an error raised
    on the client (a value psycopg refuses to send, the block's own exception) that is the
    statements before it, without the COMMIT, so the transaction is taken back here. (An
    implicit transaction, without BEGIN, would commit them at the Sync.)"""
    import psycopg

    try:
        with conn.pipeline():
            conn.execute("BEGIN")
            yield
            conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(psycopg.Error):  # a lost connection: the pool drops it
            conn.rollback()
        raise


class PostgresDatabase:
    """A connection pool for one PostgreSQL URL, shared by the stores that use it.

    Get one with :meth:`shared` (reference-counted: the pool closes when the last store
    releases it). Connections are in autocommit mode; :meth:`transaction` groups statements.
    """

    _shared: ClassVar[dict[str, PostgresDatabase]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, *, max_size: int = 10, connect_timeout: float = 10.0) -> None:
        require("psycopg", "postgres")
        pool_module = require("psycopg_pool", "postgres")
        self.url = url
        self._users = 0
        self._check_reachable(connect_timeout)
        self.pool: ConnectionPool[Any] = pool_module.ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True},
            # a connection the server dropped (a restart, a terminated session) is replaced
            # on checkout instead of failing the next write (without a round trip: _check)
            check=_check,
            open=False,
            name="deskwork",
        )
        self.pool.open(wait=True, timeout=connect_timeout)

    def _check_reachable(self, timeout: float) -> None:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=max(1, int(timeout))).close()
        except psycopg.Error as exc:
            reason = _reason(exc, self.url)
            raise ConfigurationError(
                f"cannot connect to the database at {redact_url(self.url)}: {reason}"
            ) from None

    @classmethod
    def shared(cls, url: str) -> PostgresDatabase:
        """The pool of ``url`` for one more user (call :meth:`release` when done)."""
        with cls._shared_lock:
            database = cls._shared.get(url)
            if database is None:
                database = cls._shared[url] = cls(url)
            database._users += 1
            return database

    def release(self) -> None:
        """One user is done; the pool closes when none is left."""
        with self._shared_lock:
            self._users -= 1
            if self._users > 0:
                return
            if self._shared.get(self.url) is self:
                del self._shared[self.url]
        self.pool.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (autocommit); a lost server raises :class:`StoreError`."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.DataError, PoolTimeout) as exc:
            where, reason = redact_url(self.url), _reason(exc, self.url)
            if isinstance(exc, psycopg.errors.ProgramLimitExceeded | psycopg.DataError):
                raise refused_value(where, reason) from exc  # the value, not the server
            raise StoreError(
                f"the database at {where} cannot be reached: {reason}", location=where
            ) from exc

    @contextmanager
    def transaction(self, *, piped: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside one transaction (committed on success).

        ``piped``: the statements go to the server together, in one round trip, as one
        pipeline: ``BEGIN``, the block's statements, ``COMMIT`` and the pipeline's one Sync.
        The block must not read a result (that would send a Sync): results, ``rowcount``
        included, are there once it ended. (psycopg's ``transaction()`` in a pipeline syncs
        after BEGIN, the statements and COMMIT: four round trips.)"""
        with self.connection() as conn, _piped(conn) if piped else conn.transaction():
            yield conn

    def migrate(self, component: str, migrations: Sequence[Sequence[str]]) -> None:
        """Apply the migrations ``component`` lacks; version ``n`` is ``migrations[n - 1]``."""
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(_SCHEMA_TABLE)
            row = conn.execute(
                "SELECT version FROM deskwork_schema WHERE component=%s", (component,)
            ).fetchone()
            current = int(row[0]) if row else 0
            if current > len(migrations):
                raise StoreError(
                    f"the {component} tables at {redact_url(self.url)} have schema version"
                    f" {current}, newer than this deskwork knows ({len(migrations)}):"
                    " upgrade deskwork",
                    location=redact_url(self.url),
                )
            for statements in migrations[current:]:
                for statement in statements:
                    conn.execute(statement)  # a constant from the migration lists
            conn.execute(
                "INSERT INTO deskwork_schema (component, version) VALUES (%s, %s)"
                " ON CONFLICT (component) DO UPDATE SET version=EXCLUDED.version",
                (component, len(migrations)),
            )

    def schema_versions(self) -> dict[str, int]:
        """Each component's schema version (empty before any store was opened)."""
        with self.connection() as conn:
            conn.execute(_SCHEMA_TABLE)
            rows = conn.execute("SELECT component, version FROM deskwork_schema").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}


# Forward migrations: append, never edit a released entry.
_RUN_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS deskwork_runs (run_id TEXT PRIMARY KEY,"
        " status TEXT NOT NULL, input TEXT, output TEXT, output_json TEXT, state TEXT,"
        " created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL)",
        "CREATE INDEX IF NOT EXISTS deskwork_runs_updated ON deskwork_runs (updated_at)",
        "CREATE TABLE IF NOT EXISTS deskwork_events (seq BIGSERIAL PRIMARY KEY,"
        " event_id TEXT NOT NULL, run_id TEXT NOT NULL, type TEXT NOT NULL,"
        " timestamp TIMESTAMPTZ NOT NULL, source TEXT NOT NULL, payload TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS deskwork_events_run ON deskwork_events (run_id, seq)",
    ],
    [
        "ALTER TABLE deskwork_runs ADD COLUMN IF NOT EXISTS runner TEXT",
        "ALTER TABLE deskwork_runs ADD COLUMN IF NOT EXISTS owner TEXT",
        "CREATE TABLE IF NOT EXISTS deskwork_checkpoints (thread_id TEXT NOT NULL,"
        ' key TEXT COLLATE "C" NOT NULL, value BYTEA NOT NULL, PRIMARY KEY (thread_id, key))',
    ],
    [
        "CREATE TABLE IF NOT EXISTS deskwork_blobs (hash TEXT PRIMARY KEY, data TEXT NOT NULL)",
    ],
    # a run's output with a NUL or a lone surrogate (which a text column cannot hold) is
    # stored as its JSON text, marked here (_blobs.escape_text); NULL for every other output
    ["ALTER TABLE deskwork_runs ADD COLUMN IF NOT EXISTS output_escaped BOOLEAN"],
]
_SESSION_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS deskwork_sessions (id TEXT PRIMARY KEY,"
        " worker_name TEXT NOT NULL, metadata TEXT NOT NULL,"
        " created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL)",
        "CREATE TABLE IF NOT EXISTS deskwork_session_messages (seq BIGSERIAL PRIMARY KEY,"
        " id TEXT NOT NULL, session_id TEXT NOT NULL"
        " REFERENCES deskwork_sessions (id) ON DELETE CASCADE,"
        " message_json TEXT NOT NULL, timestamp TIMESTAMPTZ NOT NULL)",
        "CREATE INDEX IF NOT EXISTS deskwork_session_messages_session"
        " ON deskwork_session_messages (session_id, seq)",
    ],
]
RUN_SCHEMA_VERSION = len(_RUN_MIGRATIONS)
SESSION_SCHEMA_VERSION = len(_SESSION_MIGRATIONS)

_RUN_COLUMNS = (
    "run_id, status, input, output, output_json, created_at, updated_at, {state}, runner, owner,"
    " output_escaped"
)
_INSERT_EVENT = (  # not if its run is there but not running (nor of the status it may also
    # find: RunStore); the run's row locked FOR SHARE, so an end stored meanwhile by another
    # transaction (a cancel) comes wholly before this event or wholly after it
    "INSERT INTO deskwork_events (event_id, run_id, type, timestamp, source, payload)"
    " SELECT %s, %s, %s, %s, %s, %s FROM (SELECT 1) AS one LEFT JOIN (SELECT status"
    " FROM deskwork_runs WHERE run_id = %s FOR SHARE) AS run ON true"
    " WHERE run.status IS NULL OR run.status IN ('running', %s)"
)
_INSERT_AFTER_END = (  # only if the run is finished; its row locked FOR SHARE, as above
    "INSERT INTO deskwork_events (event_id, run_id, type, timestamp, source, payload)"
    " SELECT %s, %s, %s, %s, %s, %s FROM deskwork_runs WHERE run_id = %s"
    " AND status IN ('completed', 'failed') FOR SHARE"
)
_UPSERT_RUN = (
    "INSERT INTO deskwork_runs (run_id, status, input, created_at, updated_at, runner, owner)"
    " VALUES (%s, 'running', %s, %s, %s, %s, %s)"
    " ON CONFLICT (run_id) DO UPDATE SET status='running', input=EXCLUDED.input,"
    " output=NULL, output_escaped=NULL, output_json=NULL, state=NULL,"
    " created_at=EXCLUDED.created_at, updated_at=EXCLUDED.updated_at, runner=EXCLUDED.runner,"
    " owner=EXCLUDED.owner"
)
_FINISH_RUN = (
    "WITH updated AS ({update} RETURNING run_id)"
    " INSERT INTO deskwork_events (event_id, run_id, type, timestamp, source, payload)"
    " SELECT %s, %s, %s, %s, %s, %s FROM updated"
)
_Write = tuple[str, tuple[Any, ...]]  # a statement and its parameters
_PUT_BLOB = "INSERT INTO deskwork_blobs (hash, data) VALUES (%s, %s) ON CONFLICT (hash) DO NOTHING"
_log = get_stdlib_logger("deskwork.store")


class _PostgresStore:
    """Opens (and migrates) a shared pool; ``close`` releases it."""

    _component: ClassVar[str]
    _migrations: ClassVar[list[list[str]]]

    def __init__(self, url: str) -> None:
        self._db = PostgresDatabase.shared(url)
        self._closed = False
        try:
            self._db.migrate(self._component, self._migrations)
        except BaseException:
            self.close()
            raise

    @property
    def database(self) -> PostgresDatabase:
        """The shared connection pool."""
        return self._db

    def close(self) -> None:
        """Release the pool: every later call raises :class:`StoreError` (the pool may stay
        open for the URL's other stores); a second ``close()`` does nothing."""
        if not self._closed:
            self._closed = True
            self._db.release()

    def _check_open(self) -> None:
        """Raise the closed store's :class:`StoreError` after :meth:`close`."""
        if self._closed:
            raise closed_store(redact_url(self._db.url))

    def _unknown(self, *keys: str) -> bool:
        """Whether a read or a lookup by ``keys`` finds nothing because one holds a character
        no stored key has (:func:`~deskwork.store._errors.unstorable_text`; a text column
        cannot hold a NUL): answered without a query, but after :meth:`close` with the closed
        store's :class:`StoreError`, as every call."""
        for key in keys:
            if unstorable_text(key):
                self._check_open()
                return True
        return False

    def _connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """:meth:`PostgresDatabase.connection`, while this store is open."""
        self._check_open()
        return self._db.connection()

    def _transaction(
        self, *, piped: bool = False
    ) -> AbstractContextManager[psycopg.Connection[Any]]:
        """:meth:`PostgresDatabase.transaction`, while this store is open."""
        self._check_open()
        return self._db.transaction(piped=piped)

    def _decoding(self, what: str) -> AbstractContextManager[None]:
        """A stored value damaged in place is a StoreError naming the database and the value."""
        return decoding(what, self._damaged)

    def _damaged(self, problem: str) -> StoreError:
        where = redact_url(self._db.url)
        return StoreError(
            f"a value in the database at {where} is damaged ({problem}). It was left as it"
            " is: repair or delete that row, or restore the database from a backup.",
            location=where,
        )


class PostgresRunStore(_PostgresStore, RunStore):
    """Runs, events and checkpoints in PostgreSQL (``deskwork_runs``, ``deskwork_events``)."""

    _component = "runs"
    _migrations = _RUN_MIGRATIONS

    def __init__(self, url: str) -> None:
        self._pending: list[_Write] = []  # run starts and events not committed yet, in order
        self._pending_blobs: dict[str, str] = {}
        self._scheduled = False  # the writer thread is due to commit the pending ones
        self._pending_lock = threading.Lock()  # guards the three above; never held on I/O
        self._commit_lock = threading.RLock()  # one commit at a time, so in order
        self._writer: ThreadPoolExecutor | None = None
        self._hurry = threading.Event()  # a writer job waiting for a checkpoint: commit now
        self._refused_runs: set[str] = set()  # runs whose events a commit refused (not running)
        self._closing = False  # close() began: no write is added (guarded by _pending_lock)
        super().__init__(url)

    @contextmanager
    def _write(
        self, *, atomic: bool = False, piped: bool = False
    ) -> Iterator[psycopg.Connection[Any]]:
        """A connection that has first inserted the pending writes, in one transaction with
        the caller's statements (autocommit when nothing is pending, unless ``atomic``);
        ``piped``: the transaction in one round trip (see :meth:`PostgresDatabase.transaction`:
        the caller reads no result inside the block)."""
        with self._commit_lock:
            with self._pending_lock:
                rows, blobs = self._pending, self._pending_blobs
                self._pending, self._pending_blobs = [], {}
            inserts: list[tuple[Any, list[_Write]]] = []
            try:
                in_transaction = rows or atomic
                with (
                    self._transaction(piped=piped) if in_transaction else self._connection()
                ) as conn:
                    if rows:
                        self._put_blobs(conn, blobs)  # before the rows that refer to them
                        inserts = _execute_in_order(conn, rows)
                    yield conn
            except Exception as exc:
                if rows and _refused(exc):
                    self._salvage(rows, blobs)
                else:
                    self._keep(rows, blobs)
                raise
            except BaseException:
                self._keep(rows, blobs)
                raise
            if any(cursor.rowcount < len(group) for cursor, group in inserts):
                self._note_refused([params for _, group in inserts for _, params in group])

    def _note_refused(self, rows: list[tuple[Any, ...]]) -> None:
        """Remember the runs of event ``rows`` that the commit refused (rare: then read)."""
        allowed = {(row[1], row[7]) for row in rows}
        found = dict(
            self._fetch(
                "SELECT run_id, status FROM deskwork_runs WHERE run_id = ANY(%s)",
                ([run_id for run_id, _ in allowed],),
            )
        )
        for run_id, also in allowed:
            if found.get(run_id, "running") not in ("running", also):
                self._refused_runs.add(run_id)

    def _keep(self, rows: list[_Write], blobs: dict[str, str]) -> None:
        """Put writes back in front of the pending ones, in order, for the next commit."""
        with self._pending_lock:
            self._pending[:0] = rows
            self._pending_blobs.update(blobs)

    def _salvage(self, rows: list[_Write], blobs: dict[str, str]) -> None:
        """Commit a refused batch write by write: one value the database refuses for good is
        dropped (and logged), so it cannot block every later write of every run. An event
        not stored because its run is not running is noted as the batch's would be."""
        writes: list[_Write] = [(_PUT_BLOB, item) for item in blobs.items()] + rows
        skipped: list[tuple[Any, ...]] = []  # event rows whose run was not running
        try:
            for index, write in enumerate(writes):
                try:
                    with self._transaction() as conn:
                        if conn.execute(*write).rowcount == 0 and write[0] == _INSERT_EVENT:
                            skipped.append(write[1])
                except Exception as exc:
                    if not _refused(exc):  # not the value: the rest waits for the next commit
                        self._keep(writes[index:], {})
                        raise
                    _log.error(
                        "the database at %s refused a write; dropped: %s",
                        redact_url(self._db.url),
                        _reason(exc.__cause__ or exc, self._db.url),  # the driver's words
                    )
        finally:
            if skipped:
                self._note_refused(skipped)

    def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rows of a read, after the pending writes (and one being committed) are
        committed; tried once more on another connection when the first was lost (a
        session the server ended as it was handed out: the pool's check sees it only once
        the server has sent its error)."""
        import psycopg

        self._flush()
        try:
            return self._fetch(sql, params)
        except StoreError as exc:
            if not isinstance(exc.__cause__, psycopg.OperationalError):
                raise
        return self._fetch(sql, params)

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            return conn.execute(sql, params).fetchall()

    def flush(self) -> None:
        """Commit the events added but not committed yet, waiting for the writer thread's
        commit in progress (reads and writes do it too; the worker does it before it runs a
        tool). Inside :meth:`carried`, in the workflow's own code, nothing: the run's next
        DBOS checkpoint (a tool's step starts with one) commits them."""
        carried = _carrier.get()
        if carried is not None and carried[0] is self and carried[1]():
            return
        self._flush()

    def _flush(self) -> None:
        self._check_open()
        with self._commit_lock:
            if self._pending:
                with self._write(piped=True):
                    pass

    def _commit_carried(self) -> None:
        """The writer thread's job for writes a checkpoint may carry (:meth:`carried`):
        commit what is pending after :data:`CARRY_SECONDS`, or as soon as a write that may
        not wait comes (a checkpoint may have taken them all by then)."""
        self._hurry.wait(CARRY_SECONDS)
        self._commit_pending()

    def _commit_pending(self) -> None:
        """The writer thread's job: commit what is pending now. A commit that fails keeps
        them pending: the next call of this store commits them, or raises why it cannot."""
        with self._pending_lock:
            self._scheduled = False
            self._hurry.clear()
        try:
            self._flush()
        except Exception as exc:  # said here (nobody waits on this thread) and raised later
            _log.warning(
                "events not committed yet to the database at %s (kept, retried by the next"
                " call): %s",
                redact_url(self._db.url),
                _reason(exc, self._db.url),
            )

    def _add(self, write: _Write, blobs: dict[str, str], *, now: bool = False) -> None:
        """Commit ``write`` now outside an event loop (or if ``now``), else on the writer
        thread at once (inside :meth:`carried`: after :data:`CARRY_SECONDS`, unless a
        checkpoint carried it first)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            now = True
        if now:
            with self._pending_lock:
                self._check_adding()
                self._pending.append(write)
                self._pending_blobs.update(blobs)
            self._flush()
            return
        carried = _carrier.get()
        can_wait = carried is not None and carried[0] is self
        with self._pending_lock:
            self._check_adding()  # else kept for a commit that never comes, on a new writer
            self._pending.append(write)
            self._pending_blobs.update(blobs)
            if self._scheduled:
                if not can_wait:
                    self._hurry.set()  # a job waiting for a checkpoint commits at once
                return
            self._scheduled = True
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="deskwork-pg-events")
            writer = self._writer
        writer.submit(self._commit_carried if can_wait else self._commit_pending)

    def _check_adding(self) -> None:
        """Raise the closed store's error once :meth:`close` began (under ``_pending_lock``)."""
        if self._closing:
            raise closed_store(redact_url(self._db.url))

    def close(self) -> None:
        with self._pending_lock:
            if self._closing:
                return
            self._closing = True
        try:
            if self._writer is not None:
                self._hurry.set()
                self._writer.shutdown(wait=True)
            self._flush()
        finally:
            super().close()

    @contextmanager
    def carried(self, when: Callable[[], bool]) -> Iterator[None]:
        """Inside this block (a durable run's workflow, whose DBOS checkpoints go to this
        store's database) the run's pending writes ride its next checkpoint: committed in
        its round trip (:meth:`commit_with`), or by the writer thread after
        :data:`CARRY_SECONDS` if no checkpoint came first; and :meth:`flush`, while
        ``when()`` (the workflow's own code, not a step's), leaves them to that checkpoint."""
        token = _carrier.set((self, when))
        try:
            yield
        finally:
            _carrier.reset(token)

    def commit_with(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` (a statement of another component on this database, such as
        a DBOS checkpoint), run after the pending writes (one transaction, one round trip),
        and after a commit of them in progress. With none, ``sql`` alone, in autocommit and
        without waiting for the store's other writes. Raises the database's error; then
        nothing of ``sql`` is committed."""
        if self._commit_lock.acquire(blocking=False):  # no commit in progress
            try:
                idle = not self._pending
            finally:
                self._commit_lock.release()
            if idle:
                with self._connection() as conn:
                    return _rows_of(conn.execute(sql, params))
        with self._write(piped=True) as conn:
            cursor = conn.execute(sql, params)
        return _rows_of(cursor)

    def _put_blobs(self, conn: psycopg.Connection[Any], blobs: dict[str, str]) -> None:
        if blobs:
            with conn.cursor() as cursor:
                cursor.executemany(_PUT_BLOB, list(blobs.items()))

    def _fetch_blobs(self, hashes: Iterable[str]) -> dict[str, str]:
        rows = self._rows(
            "SELECT hash, data FROM deskwork_blobs WHERE hash = ANY(%s)", (list(hashes),)
        )
        return {str(row[0]): str(row[1]) for row in rows}

    def begin_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        """Record a starting run: committed with its first step's events (like
        :meth:`add_event`)."""
        self._add(*self._run_row(run_id, input_payload, runner))

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        (_, params), blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:
            self._put_blobs(conn, blobs)
            cursor = conn.execute(
                "INSERT INTO deskwork_runs (run_id, status, input, created_at, updated_at,"
                " runner, owner) VALUES (%s, 'running', %s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO NOTHING",
                params,
            )
            return cursor.rowcount == 1

    def create_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        row, blobs = self._run_row(run_id, input_payload, runner)
        with self._write() as conn:
            self._put_blobs(conn, blobs)  # before the row: a crash leaves no dangling reference
            conn.execute(*row)

    def _run_row(
        self, run_id: str, input_payload: Any, runner: str | None
    ) -> tuple[_Write, dict[str, str]]:
        check_keys(redact_url(self._db.url), run_id, runner)  # refused now, not on the writer
        now = utc_now()
        owner = current_owner().model_dump_json()
        blobs: dict[str, str] = {}
        stored_input = pack_json(to_jsonable(input_payload), blobs)
        return (_UPSERT_RUN, (run_id, stored_input, now, now, runner, owner)), blobs

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        if self._unknown(run_id):  # no stored run has one
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
        if self._unknown(run_id):  # no stored run has one
            raise KeyError(f"unknown run {run_id!r}")
        blobs: dict[str, str] = {}
        sql, params = _update_run(run_id, status, output, output_json, state, blobs)
        event = self._event_row(end_event, blobs)
        if self._refused_runs:
            raise_if_refused(self._refused_runs, run_id)
        with self._write(atomic=True, piped=True) as conn:  # one round trip
            self._put_blobs(conn, blobs)
            # the end event is inserted only if the record was updated (one statement)
            update = _FINISH_RUN.format(update=sql + IF_ENDABLE_SQL)
            cursor = conn.execute(update, (*params, *event))
        if cursor.rowcount == 0:  # nothing of it stored: no such run, or not running
            if not self._rows("SELECT 1 FROM deskwork_runs WHERE run_id=%s", (run_id,)):
                raise KeyError(f"unknown run {run_id!r}")
            # told now: a note of its events that this commit (or the writer's) refused
            # would wait for a write that never comes (the desk stops the run here)
            self._refused_runs.discard(run_id)
            raise RunNotRunningError(run_id)

    def claim_paused(self, run_id: str, action_id: str | None = None) -> bool:
        if self._unknown(run_id):
            return False
        with self._write(atomic=action_id is not None) as conn:
            if action_id is not None:
                row = conn.execute(  # the row stays locked until the update commits
                    "SELECT state FROM deskwork_runs WHERE run_id=%s AND status='paused'"
                    " FOR UPDATE",
                    (run_id,),
                ).fetchone()
                if row is None or not pauses_at(row[0], action_id):
                    return False
            cursor = conn.execute(
                "UPDATE deskwork_runs SET status='running', updated_at=%s, owner=%s"
                " WHERE run_id=%s AND status='paused'",
                (utc_now(), current_owner().model_dump_json(), run_id),
            )
        return cursor.rowcount == 1

    def get_run(self, run_id: str) -> RunRecord | None:
        if self._unknown(run_id):  # an id from outside (GET /runs/{id}): not found, no error
            return None
        rows = self._rows(
            f"SELECT {_RUN_COLUMNS.format(state='state')} FROM deskwork_runs WHERE run_id=%s",
            (run_id,),
        )
        row = rows[0] if rows else None
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
        check_limit(limit)  # (PostgreSQL refuses a negative LIMIT)
        since = listing_since(since)
        if self._unknown(runner or "", status or ""):  # GET /runs?runner=a%00b
            return []
        where, params = _filters(status, runner, since)
        rows = self._rows(
            f"SELECT {_RUN_COLUMNS.format(state='NULL')} FROM deskwork_runs"
            f"{where} ORDER BY updated_at DESC LIMIT %s",
            (*params, limit),
        )
        with self._decoding("a run record"):
            return [_record(row, self._fetch_blobs) for row in rows]

    def add_event(self, event: Event) -> None:
        """Store ``event``: committed now outside an event loop or when it ends a run, else
        by the writer thread at once (see the module docstring), in order either way;
        only while its run is running (:class:`RunStore`; one refused in a later commit
        makes the run's next write raise)."""
        run_id = event.run_id
        if self._refused_runs:
            raise_if_refused(self._refused_runs, run_id)
        blobs: dict[str, str] = {}
        also = STATUS_BY_END.get(event.type, "running")  # an end: the record may have it
        row = (*self._event_row(event, blobs), run_id, also)
        self._add((_INSERT_EVENT, row), blobs, now=event.type in RUN_END_EVENTS)
        if self._refused_runs:  # committed now (an end, or outside a loop) and refused
            raise_if_refused(self._refused_runs, run_id)

    def add_event_after_end(self, event: Event) -> bool:
        """Store ``event`` after its finished run's end (see :class:`RunStore`), committed
        before the call returns (after the pending writes)."""
        blobs: dict[str, str] = {}
        row = self._event_row(event, blobs)
        with self._write(atomic=bool(blobs)) as conn:
            self._put_blobs(conn, blobs)
            cursor = conn.execute(_INSERT_AFTER_END, (*row, event.run_id))
        return cursor.rowcount == 1

    def _event_row(self, event: Event, blobs: dict[str, str]) -> tuple[Any, ...]:
        """:func:`_event_row`, its texts checked now (on the writer thread a refused one was
        dropped and logged after ``add_event`` had returned)."""
        row = _event_row(event, blobs)
        check_event_keys(redact_url(self._db.url), *row[:3], row[4])
        return row

    def get_events(self, run_id: str) -> list[Event]:
        if self._unknown(run_id):
            return []
        rows = self._rows(
            "SELECT event_id, type, timestamp, run_id, source, payload FROM deskwork_events"
            " WHERE run_id=%s ORDER BY seq",
            (run_id,),
        )
        with self._decoding(f"an event of run {run_id}"):
            return [
                Event(
                    event_id=r[0],
                    type=r[1],
                    timestamp=r[2],
                    run_id=r[3],
                    source=r[4],
                    payload=unpack_json(r[5], self._fetch_blobs),
                )
                for r in rows
            ]

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        action = "UPDATE SET value=EXCLUDED.value" if overwrite else "NOTHING"
        rows = [(thread_id, key, bytes(value)) for key, value in items]
        check_keys(redact_url(self._db.url), thread_id, *(key for _, key, _ in rows))
        self._flush()
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO deskwork_checkpoints (thread_id, key, value) VALUES (%s, %s, %s)"
                f" ON CONFLICT (thread_id, key) DO {action}",
                rows,
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
        if self._unknown(thread_id, prefix):  # no stored one has it
            return []
        order = "DESC" if newest_first else "ASC"
        rows = self._rows(
            "SELECT key, value FROM deskwork_checkpoints WHERE thread_id=%s"
            f" AND starts_with(key, %s) ORDER BY key {order} LIMIT %s",
            (thread_id, prefix, limit),
        )
        return [(str(r[0]), bytes(r[1])) for r in rows]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        if self._unknown(thread_id):
            return
        with self._write() as conn:
            conn.execute("DELETE FROM deskwork_checkpoints WHERE thread_id=%s", (thread_id,))


class PostgresSessionStore(_PostgresStore, SessionStore):
    """Sessions and their messages in PostgreSQL (``deskwork_sessions``)."""

    _component = "sessions"
    _migrations = _SESSION_MIGRATIONS

    def create_session(
        self, session_id: str, worker_name: str, metadata: dict[str, Any]
    ) -> SessionRecord:
        check_keys(redact_url(self._db.url), session_id, worker_name)
        now = utc_now()
        record = SessionRecord(  # refused metadata (a key not a text) leaves no row behind
            id=session_id,
            worker_name=worker_name,
            metadata=metadata,
            created_at=now,
            updated_at=now,
        )
        with self._connection() as conn:
            cursor = conn.execute(
                "INSERT INTO deskwork_sessions (id, worker_name, metadata, created_at, updated_at)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (session_id, worker_name, json.dumps(to_jsonable(metadata)), now, now),
            )
        if cursor.rowcount == 0:
            raise ValueError(f"session {session_id!r} already exists")
        return record

    def get_session(self, session_id: str) -> SessionRecord | None:
        if self._unknown(session_id):  # an id from outside (/sessions/{id}): not found
            return None
        with self._connection() as conn:
            row = conn.execute(
                "SELECT id, worker_name, metadata, created_at, updated_at FROM deskwork_sessions"
                " WHERE id=%s",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        with self._decoding(f"session {session_id}"):
            return SessionRecord(
                id=row[0],
                worker_name=row[1],
                metadata=json.loads(row[2]),
                created_at=row[3],
                updated_at=row[4],
            )

    def get_messages(self, session_id: str) -> list[Message]:
        if self._unknown(session_id):
            return []
        with self._connection() as conn:
            return self._read(conn, session_id)

    def replace_messages(self, session_id: str, messages: list[Message]) -> None:
        self._write(session_id, lambda _conn: messages)  # (what it replaces is not read)

    def update_messages(
        self, session_id: str, update: Callable[[list[Message]], list[Message]]
    ) -> None:
        self._write(session_id, lambda conn: update(self._read(conn, session_id)))

    def _read(self, conn: psycopg.Connection[Any], session_id: str) -> list[Message]:
        rows = conn.execute(
            "SELECT message_json FROM deskwork_session_messages WHERE session_id=%s ORDER BY seq",
            (session_id,),
        ).fetchall()
        with self._decoding(f"a message of session {session_id}"):
            return [load_model(Message, row[0]) for row in rows]

    def _write(
        self, session_id: str, messages_of: Callable[[psycopg.Connection[Any]], list[Message]]
    ) -> None:
        """Replace the session's messages with ``messages_of(connection)``, in a transaction
        that holds the session's row locked until it ends."""
        if self._unknown(session_id):  # no stored session has one
            raise KeyError(f"unknown session {session_id!r}")
        now = utc_now()
        with self._transaction() as conn:
            cursor = conn.execute(
                "UPDATE deskwork_sessions SET updated_at=%s WHERE id=%s", (now, session_id)
            )
            if cursor.rowcount == 0:
                raise KeyError(f"unknown session {session_id!r}")
            messages = messages_of(conn)
            conn.execute("DELETE FROM deskwork_session_messages WHERE session_id=%s", (session_id,))
            with conn.cursor() as insert:
                insert.executemany(
                    "INSERT INTO deskwork_session_messages (id, session_id, message_json,"
                    " timestamp) VALUES (%s, %s, %s, %s)",
                    [(new_id(), session_id, dump_model(m), now) for m in messages],
                )

    def delete_session(self, session_id: str) -> None:
        if self._unknown(session_id):
            return
        with self._connection() as conn:
            conn.execute("DELETE FROM deskwork_sessions WHERE id=%s", (session_id,))


def _check(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection on checkout, without a round trip while it is idle.

    A server that drops a session (a restart, ``pg_terminate_backend``) first sends it an
    error, then closes it: an idle connection whose socket has something to read was
    dropped (these connections ``LISTEN`` to nothing), and psycopg_pool's own check (an
    empty query: one round trip) raises then, so the pool replaces it. One with nothing to
    read is handed out as it is: checking every checkout cost about 10 round trips a
    durable run."""
    from psycopg_pool import ConnectionPool

    if conn.closed or _readable(conn.pgconn.socket):
        ConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    """Whether the socket ``fd`` has something to read (or was closed) now: by ``poll``
    (``select`` refuses a descriptor above ``FD_SETSIZE``), by ``select`` where there is
    no ``poll`` (Windows)."""
    if not hasattr(select, "poll"):
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def _refused(exc: BaseException) -> bool:
    """Whether the database refused a value for good (kept pending, the other errors --
    an unreachable server, a missing table -- are retried by the next commit). A value over
    a limit (a run id too long for its index) is one too: :class:`StoreError` says so."""
    import psycopg

    if isinstance(exc, StoreError):
        return isinstance(exc.__cause__, psycopg.errors.ProgramLimitExceeded | psycopg.DataError)
    return isinstance(exc, (psycopg.DataError, psycopg.IntegrityError, UnicodeError))


def _reason(exc: BaseException, url: str) -> str:
    """The first line of a driver error, without the URL's password."""
    text = str(exc).strip()
    return scrub(text.splitlines()[0] if text else type(exc).__name__, url)


def _filters(
    status: str | None, runner: str | None, since: datetime | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for clause, value in (("status=%s", status), ("runner=%s", runner), ("updated_at>=%s", since)):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _update_run(
    run_id: str,
    status: RunStatus,
    output: str | None,
    output_json: Any | None,
    state: RunState | None,
    blobs: dict[str, str],
) -> _Write:
    """The statement that stores a run's status, output and state (large values in ``blobs``)."""
    values = (
        *escape_text(output),
        pack_json(to_jsonable(output_json), blobs),
        pack_json(state.model_dump(mode="json") if state is not None else None, blobs),
    )
    return (
        "UPDATE deskwork_runs SET status=%s, output=%s, output_escaped=%s, output_json=%s,"
        " state=%s, updated_at=%s WHERE run_id=%s",
        (status, *values, utc_now(), run_id),
    )


def _event_row(event: Event, blobs: dict[str, str]) -> tuple[Any, ...]:
    """The parameters of ``_INSERT_EVENT`` for ``event`` (a large payload in ``blobs``)."""
    return (
        event.event_id,
        event.run_id,
        str(event.type),
        event.timestamp,
        event.source,
        pack_json(event.payload, blobs),
    )


def _record(row: Sequence[Any], fetch: Fetch) -> RunRecord:
    state = unpack_json(row[7], fetch)
    return RunRecord(
        run_id=row[0],
        status=row[1],
        input=unpack_json(row[2], fetch),
        output=unescape_text(row[3], row[10]),
        output_json=unpack_json(row[4], fetch),
        created_at=row[5],
        updated_at=row[6],
        state=RunState.model_validate(state) if state is not None else None,
        runner=row[8],
        owner=RunOwner.model_validate_json(row[9]) if row[9] else None,
    )


def _rows_of(cursor: psycopg.Cursor[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``cursor``'s statement; none for a statement that returns none."""
    return cursor.fetchall() if cursor.description is not None else []


def _execute_in_order(
    conn: psycopg.Connection[Any], writes: list[_Write]
) -> list[tuple[psycopg.Cursor[Any], list[_Write]]]:
    """Run ``writes`` in order, each run of one statement as one ``executemany``; the
    cursors of the event inserts with their writes (each one's ``rowcount``, once the
    transaction ended, says how many it stored)."""
    start = 0
    inserts: list[tuple[psycopg.Cursor[Any], list[_Write]]] = []
    for end in range(1, len(writes) + 1):
        if end == len(writes) or writes[end][0] != writes[start][0]:
            group = writes[start:end]
            cursor = conn.cursor()
            cursor.executemany(group[0][0], [params for _, params in group])
            if group[0][0] == _INSERT_EVENT:
                inserts.append((cursor, group))
            start = end
    return inserts
