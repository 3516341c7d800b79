"""DBOS's step checkpoint statements, built once per system database instead of per step.

Every DBOS step reads the workflow's status and the step's recorded output
(``_check_operation_execution_txn``: two queries, here one join) before it runs, and after
it runs checks that this execution still owns the workflow (``_check_owner_txn``) and
inserts the step's output (``_record_operation_result_txn``). DBOS (3.4.0) builds each
of these SQLAlchemy statements from scratch on every call, with the workflow id and step
number as literals: the clause construction and the cache key SQLAlchemy derives from it
were the largest share of a durable run's CPU (more than the queries themselves; its
prepared-statement cache covers only the workflow-level writes, and only on PostgreSQL).

:func:`prepare_step_statements` replaces the three private methods of DBOS's
``SystemDatabase`` with versions that build their statements once per system database,
with bind parameters for the per-call values, so SQLAlchemy finds the compiled SQL in its
cache at once. The SQL sent, the checks and the errors raised are DBOS's own. A system
database that adds shard-key predicates or columns (a sharded subclass) overrides the key
helpers; it keeps DBOS's methods.

The ownership check and the insert of the step's output are one statement, ``INSERT ...
SELECT ... FROM workflow_status WHERE workflow_uuid = ... AND owner_xid = ...`` (PostgreSQL:
``FOR NO KEY UPDATE``; SQLite takes its write lock before an ``INSERT``): the output is
written only if this execution still owns the workflow, whose row stays locked from the
check to the write as in DBOS's transaction; no row back means another execution owns it
(DBOS's ``DBOSWorkflowConflictIDError``).

On PostgreSQL a step's two checkpoint transactions are also cut to one round trip each.
DBOS runs each in ``engine.begin()``: BEGIN, the statements and COMMIT are separate round
trips (psycopg sends BEGIN before the first statement), seven per step. Here the read and
the record are single statements in autocommit (one statement is one transaction).

When the running workflow's run store is a PostgreSQL store on the same database with
events pending, a step's read and record run on the store's connection instead, in the
transaction (and round trip) that commits those events (:class:`_Carried`).

A workflow's start (``init_workflow``) is one round trip on PostgreSQL too, instead of four
(BEGIN, its status row, its input, COMMIT): DBOS's own insert and checks, with the input
inserted in the same statement when the status row is the starting call's own
(:func:`_init_workflow`).

A workflow's end on SQLite (``_update_workflow_outcome_in_transaction``: DBOS's ``UPDATE``
of the status row, owned and ``PENDING``, then the output's upsert only if it landed) runs
statements built once too, and so does its start there: DBOS's ``_execute_prepared``
compiles its statement once per name and set of columns on PostgreSQL but calls ``build()``
on every SQLite call; here ``build()``'s statement is kept per name and columns on SQLite
as well. (On PostgreSQL DBOS's end write is one statement it prepares itself.)

On SQLite every one of these statements (a step's too) is sent as its SQL, compiled once
with the schema in it, by ``exec_driver_sql`` (:func:`_execute`): SQLAlchemy's execution of
a statement object looks its compiled form up in a cache, translates the schema in the SQL
string and processes the parameters on every call (~30 us a statement, ten a run).

An async step also takes one thread hop less: DBOS's ``Pending.then`` (how an async step's
result is recorded, and an async workflow's) sends a worker thread a function that only
returns the stage (``await asyncio.to_thread(lambda: next)``) before the hop that runs the
stage; here the stage runs without that first hop (:func:`_fewer_hops`). A step takes two
hops (its read and its record) instead of three.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

__all__ = [
    "RUN_WORKFLOW",
    "first_execution",
    "prepare_step_statements",
    "resume_ids",
    "workflow_state",
]

_T = TypeVar("_T")
_KEY_HELPERS = ("_wf", "_wf_values", "_child_values", "_key_column", "_key_conflict")
"""``SystemDatabase`` methods a sharded subclass overrides (then DBOS's statements stay)."""


def prepare_step_statements() -> None:
    """Patch DBOS's step checkpoint methods to reuse their statements (idempotent)."""
    try:
        from dbos._sys_db import SystemDatabase
    except ImportError:  # pragma: no cover - another DBOS version
        return
    if getattr(SystemDatabase._check_operation_execution_txn, "deskwork", False):
        return
    patched: dict[str, Callable[..., Any]] = {
        "_check_operation_execution_txn": _check_operation_execution_txn,
        "_check_owner_txn": _check_owner_txn,
        "_record_operation_result_txn": _record_operation_result_txn,
        "_update_workflow_outcome_in_transaction": _update_workflow_outcome_in_transaction,
    }
    for name, fast in patched.items():
        original = getattr(SystemDatabase, name)
        setattr(SystemDatabase, name, _unless_sharded(SystemDatabase, fast, original))
    for name, fast in _ONE_ROUND_TRIP.items():
        original = getattr(SystemDatabase, name)
        setattr(SystemDatabase, name, _unless_sharded(SystemDatabase, fast, original, sqlite=False))
    original = SystemDatabase._execute_prepared
    SystemDatabase._execute_prepared = _unless_sharded(  # type: ignore[method-assign]
        SystemDatabase, _execute_prepared, original, postgres=False
    )
    SystemDatabase.init_workflow = _noting_starts(SystemDatabase.init_workflow)  # type: ignore[method-assign]
    _fewer_hops()


_started: dict[str, str] = {}
"""Deskwork runs whose status row a start in this process created, by id: the creator's
token (DBOS's ``creator_xid``), which that start's own execution owns (until it runs)."""
RUN_WORKFLOW = "deskwork.run"
"""The workflow of a deskwork run (``_durable.WORKFLOW_NAME``): the only one noted, as its
execution asks :func:`first_execution` (and drops the note); another workflow's note would
stay for the life of the process."""


def _noting_starts(init: Callable[..., Any]) -> Any:
    """``init`` (DBOS's ``init_workflow``), noting in :data:`_started` a deskwork run this
    call created to run at once (``PENDING``: not enqueued)."""

    def init_workflow(
        self: Any, status: Any, *, creator_xid: str | None, reuse_policy: Any = None
    ) -> Any:
        wf_status, should_execute = init(
            self, status, creator_xid=creator_xid, reuse_policy=reuse_policy
        )
        run = wf_status == "PENDING" and status["name"] == RUN_WORKFLOW
        if should_execute and run and creator_xid is not None:
            _started[status["workflow_uuid"]] = creator_xid
        return wf_status, should_execute

    init_workflow.deskwork = True  # type: ignore[attr-defined]
    init_workflow.__wrapped__ = init.__wrapped__  # type: ignore[attr-defined]  # DBOS's own
    return init_workflow


def first_execution(workflow_id: str) -> bool:
    """Whether the running workflow ``workflow_id`` is the first execution of a start made
    in this process that created it: nothing ran under its id before (an execution after a
    crash, a recovery or a dequeue holds another ownership token). Asked once per execution."""
    from dbos._context import current_owner_xid

    token = _started.pop(workflow_id, None)
    return token is not None and token == current_owner_xid(workflow_id)


def _fewer_hops() -> None:
    """Patch ``Pending.then`` to run its stage without DBOS's idle first hop."""
    from dbos._outcome import Pending

    original = Pending.then

    def then(self: Any, next: Callable[[Callable[[], Any]], Any], *, dbos: Any = None) -> Any:
        return Pending(lambda: _then(self._func, next, dbos))

    then.deskwork = True  # type: ignore[attr-defined]
    then.__wrapped__ = original  # type: ignore[attr-defined]
    Pending.then = then  # type: ignore[method-assign]


async def _then(
    func: Callable[[], Awaitable[Any]], next: Callable[[Callable[[], Any]], Any], dbos: Any
) -> Any:
    """DBOS's ``Pending._wrap`` with ``before=lambda: next``, less its ``to_thread(before)``."""
    from dbos._logger import dbos_logger
    from dbos._outcome import DeferredResult, Pending

    if dbos is not None:
        await dbos._configure_asyncio_thread_pool()
    try:
        value = await func()
        result = await asyncio.to_thread(next, lambda: value)
    except asyncio.CancelledError:
        dbos_logger.warning(f"Asyncio task cancelled for workflow or step {func}")
        raise
    except BaseException as exc:
        saved = exc
        result = await asyncio.to_thread(next, lambda: Pending._raise(saved))
    if isinstance(result, DeferredResult):
        return await result.resolve_async()
    return result


_unsharded: dict[type, bool] = {}
"""Whether a system database class keeps DBOS's key helpers (its statements can be reused)."""


def _unless_sharded(
    base: type,
    fast: Callable[..., Any],
    original: Callable[..., Any],
    *,
    sqlite: bool = True,
    postgres: bool = True,
) -> Any:
    """``fast`` for a system database that keeps DBOS's key helpers, on the backends
    asked for (SQLite, PostgreSQL), else DBOS's ``original``."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        use_fast = _plain(self, base) and (sqlite if self._is_sqlite else postgres)
        return (fast if use_fast else original)(self, *args, **kwargs)

    method.deskwork = True  # type: ignore[attr-defined]
    method.__wrapped__ = original  # type: ignore[attr-defined]
    method.__name__ = original.__name__
    method.__doc__ = original.__doc__
    return method


def _plain(sys_db: Any, base: type) -> bool:
    """Whether ``sys_db`` keeps the key helpers of DBOS's ``SystemDatabase`` ``base``."""
    cls = type(sys_db)
    plain = _unsharded.get(cls)
    if plain is None:
        plain = all(getattr(cls, name) is getattr(base, name) for name in _KEY_HELPERS)
        _unsharded[cls] = plain
    return plain


def workflow_state(workflow_id: str) -> str | None:
    """The status of ``workflow_id`` (``None``: no such workflow) in one read built once.

    ``DBOS.get_workflow_status`` builds DBOS's ``list_workflows`` query on every call and
    loads the workflow's input and output with it; a process that waits for a run polls
    this instead, and asks DBOS for the whole status once the run has ended."""
    from dbos import DBOS
    from dbos._sys_db import SystemDatabase, db_retry

    sys_db = _system_database()
    if not _plain(sys_db, SystemDatabase):  # a sharded system database: DBOS's own read
        status = DBOS.get_workflow_status(workflow_id)
        return None if status is None else str(status.status)

    @db_retry(sys_db=sys_db)
    def read() -> str | None:
        with autocommit(sys_db) as conn:
            query = _statements(sys_db)["state"]
            state: str | None = _execute(sys_db, conn, query, {"deskwork_wf": workflow_id}).scalar()
            return state

    return read()


def resume_ids(run_id: str) -> list[str]:
    """The ids of the workflows ``<run_id>.resume.<n>`` (DBOS's ``list_workflows`` with
    ``workflow_id_prefix``: the same ``LIKE``, its statement built once)."""
    from dbos import DBOS
    from dbos._sys_db import SystemDatabase, db_retry

    prefix = f"{run_id}.resume."
    sys_db = _system_database()
    if not _plain(sys_db, SystemDatabase):
        found = DBOS.list_workflows(workflow_id_prefix=prefix, load_input=False, load_output=False)
        return [w.workflow_id for w in found]
    escaped = prefix.replace("/", "//").replace("%", "/%").replace("_", "/_")

    @db_retry(sys_db=sys_db)
    def read() -> list[str]:
        with autocommit(sys_db) as conn:
            query = _statements(sys_db)["resumes"]
            rows = _execute(sys_db, conn, query, {"deskwork_like": escaped + "%"})
            return [str(row[0]) for row in rows]

    return read()


def _system_database() -> Any:
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()._sys_db


def _statements(sys_db: Any) -> dict[str, Any]:
    """This system database's statements, built on first use."""
    built: dict[str, Any] | None = sys_db.__dict__.get("_deskwork_statements")
    if built is not None:
        return built
    ws, oo = sys_db.tables.workflow_status, sys_db.tables.operation_outputs
    wf: Any = sa.bindparam("deskwork_wf")
    owner: Any
    if sys_db._is_sqlite:
        # A write, so pysqlite opens BEGIN IMMEDIATE here; a SELECT would run in autocommit.
        owner = (
            sa.update(ws)
            .where(ws.c.workflow_uuid == wf)
            .values(owner_xid=ws.c.owner_xid)
            .returning(ws.c.owner_xid)
        )
    else:  # FOR NO KEY UPDATE
        owner = sa.select(ws.c.owner_xid).where(ws.c.workflow_uuid == wf)
        owner = owner.with_for_update(key_share=True)
    columns = (
        "workflow_uuid",
        "function_id",
        "function_name",
        "started_at_epoch_ms",
        "completed_at_epoch_ms",
        "output",
        "error",
        "child_workflow_id",
        "serialization",
        "application_name",
    )
    record = (
        sys_db.dialect.insert(oo)
        .values(
            **{name: sa.bindparam(f"deskwork_{name}", type_=oo.c[name].type) for name in columns},
            retention_timestamp=sys_db._now_ms_sql(),
        )
        .on_conflict_do_update(
            index_elements=sys_db._key_conflict("workflow_uuid", "function_id"),
            set_={"completed_at_epoch_ms": oo.c.completed_at_epoch_ms},
        )
        .returning(oo.c.completed_at_epoch_ms)
    )
    built = {
        "owned_record": _owned_record(sys_db, columns),
        # the workflow's status and the step's recorded output (if any) in one query
        "step": sa.select(
            ws.c.status,
            oo.c.function_id,
            oo.c.output,
            oo.c.error,
            oo.c.function_name,
            oo.c.child_workflow_id,
            oo.c.serialization,
        )
        .select_from(
            ws.outerjoin(
                oo,
                sa.and_(
                    oo.c.workflow_uuid == ws.c.workflow_uuid,
                    oo.c.function_id == sa.bindparam("deskwork_fid"),
                ),
            )
        )
        .where(ws.c.workflow_uuid == wf),
        "owner": owner,
        "record": record,
        **_outcome_statements(sys_db),
        "state": sa.select(ws.c.status).where(ws.c.workflow_uuid == wf),
        "resumes": sa.select(ws.c.workflow_uuid).where(
            ws.c.workflow_uuid.like(sa.bindparam("deskwork_like"), escape="/")
        ),
        "columns": columns,
    }
    sys_db.__dict__["_deskwork_statements"] = built
    return built


def _outcome_statements(sys_db: Any) -> dict[str, Any]:
    """DBOS's two statements of a workflow's end on SQLite (its ``UPDATE`` of the status
    row, with or without the owner's check, and the upsert of the output), with the
    call's values as bind parameters."""
    from dbos._sys_db import WorkflowStatusString

    ws, wo = sys_db.tables.workflow_status, sys_db.tables.workflow_output
    now_ms = sys_db._now_ms_sql()
    update = (
        sa.update(ws)
        .values(
            status=sa.bindparam("deskwork_status", type_=ws.c.status.type),
            deduplication_id=None,
            owner_xid=None,
            updated_at=now_ms,
            completed_at=now_ms,
        )
        .where(ws.c.workflow_uuid == sa.bindparam("deskwork_wf"))
        .where(ws.c.status == WorkflowStatusString.PENDING.value)
    )
    owner = sa.bindparam("deskwork_owner", type_=ws.c.owner_xid.type)
    insert = sys_db.dialect.insert(wo)
    output = insert.values(
        workflow_uuid=sa.bindparam("deskwork_wf"),
        output=sa.bindparam("deskwork_output", type_=wo.c.output.type),
        error=sa.bindparam("deskwork_error", type_=wo.c.error.type),
    ).on_conflict_do_update(
        index_elements=sys_db._key_conflict("workflow_uuid"),
        set_={"output": insert.excluded.output, "error": insert.excluded.error},
    )
    return {
        "outcome": update,
        "owned_outcome": update.where(ws.c.owner_xid == owner),
        "output": output,
    }


def _owned_record(sys_db: Any, columns: tuple[str, ...]) -> Any:
    """The step's output inserted only if ``deskwork_owner`` still owns the workflow (one
    statement: ``INSERT ... SELECT ... FROM workflow_status WHERE owner_xid = ...``), whose
    row it locks for the statement as DBOS's ownership check does (PostgreSQL: ``FOR NO KEY
    UPDATE``; SQLite: the write lock, taken before an ``INSERT``). No row back: not owned."""
    ws, oo = sys_db.tables.workflow_status, sys_db.tables.operation_outputs
    values = [sa.bindparam(f"deskwork_{name}", type_=oo.c[name].type) for name in columns]
    source = sa.select(*values, sys_db._now_ms_sql()).where(
        ws.c.workflow_uuid == sa.bindparam("deskwork_wf"),
        ws.c.owner_xid == sa.bindparam("deskwork_owner", type_=ws.c.owner_xid.type),
    )
    if not sys_db._is_sqlite:
        source = source.with_for_update(key_share=True)
    return (
        sys_db.dialect.insert(oo)
        .from_select([*columns, "retention_timestamp"], source)
        .on_conflict_do_update(
            index_elements=sys_db._key_conflict("workflow_uuid", "function_id"),
            set_={"completed_at_epoch_ms": oo.c.completed_at_epoch_ms},
        )
        .returning(oo.c.completed_at_epoch_ms)
    )


@contextmanager
def autocommit(sys_db: Any) -> Iterator[Any]:
    """A connection of the system database in autocommit: each statement its own
    transaction, without BEGIN and COMMIT round trips (DBOS's ``engine.begin()`` adds them;
    a PostgreSQL read is then one round trip).

    On SQLite the driver's connection is put in autocommit for the block and then back in
    the mode DBOS gives its connections (``BEGIN IMMEDIATE`` before a write): SQLAlchemy's
    ``AUTOCOMMIT`` would hand it back to the pool in pysqlite's default (``BEGIN``, deferred),
    and run a ``PRAGMA`` to do so."""
    with sys_db.engine.connect() as conn:
        if not sys_db._is_sqlite:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")
            return
        driver = conn.connection.driver_connection
        level, driver.isolation_level = driver.isolation_level, None
        try:
            yield conn
        finally:
            if not conn.invalidated:
                driver.isolation_level = level


def _on_connection(sys_db: Any, txn: Callable[[Any], _T]) -> _T:
    """``txn(conn)`` on an autocommit connection of DBOS's, or, when the running workflow's
    run store is on DBOS's database, on that store's connection (:class:`_Carried`): in
    the round trip that commits the store's pending writes (one round trip instead of two),
    and without SQLAlchemy's execution layer (a statement compiled once, sent by psycopg:
    ~0.1 ms CPU less). Should the store fail, on DBOS's connection as always (its writes
    stay pending)."""
    store = _carrier()
    if store is not None:
        with contextlib.suppress(_NotCarried):
            return txn(_Carried(sys_db, store))
    with autocommit(sys_db) as conn:
        return txn(conn)


def _carrier() -> Any:
    """The run store whose pending writes the running workflow's checkpoints carry
    (``deskwork.store.postgres.carrier``), if any."""
    module = sys.modules.get("deskwork.store.postgres")
    return None if module is None else module.carrier()


class _NotCarried(Exception):
    """The run store could not run a checkpoint statement (nothing of it committed)."""


class _Carried:
    """Stands in for DBOS's connection: a checkpoint statement (one of :func:`_statements`)
    runs through a run store on the same database, in one transaction after the store's
    pending writes, sent together (``PostgresRunStore.commit_with``). A crash leaves both or
    neither; the events a step emitted before its checkpoint are on disk with it."""

    def __init__(self, sys_db: Any, store: Any) -> None:
        self.sys_db, self.store = sys_db, store

    def execute(self, statement: Any, params: dict[str, Any]) -> _Rows:
        compiled = _driver_sql(self.sys_db, statement)
        try:
            return _Rows(self.store.commit_with(compiled.string, _driver_params(compiled, params)))
        except Exception as exc:
            raise _NotCarried(str(exc)) from exc


class _Rows:
    """The rows of a carried statement, read as DBOS's code reads a result."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def all(self) -> list[tuple[Any, ...]]:
        return self.rows

    fetchall = all


def _driver_sql(sys_db: Any, statement: Any, columns: tuple[str, ...] | None = None) -> Any:
    """``statement`` compiled once for DBOS's driver (psycopg's ``%(name)s`` parameters,
    SQLite's ``?``); ``columns``: an ``INSERT``'s columns, given as parameters."""
    # keyed by the statement itself, not its id(): the cache keeps it alive, so no later
    # statement can take a freed one's id and get its SQL
    cache: dict[tuple[Any, Any], Any] = _statements(sys_db).setdefault("compiled", {})
    key = (statement, columns)
    compiled = cache.get(key)
    if compiled is None:
        engine = sys_db.engine  # its schema in place of DBOS's placeholder, as DBOS's engine does
        compiled = cache[key] = statement.compile(
            dialect=engine.dialect,
            column_keys=None if columns is None else list(columns),
            schema_translate_map=engine.get_execution_options().get("schema_translate_map"),
            render_schema_translate=True,
        )
    return compiled


def _driver_params(compiled: Any, params: dict[str, Any]) -> Any:
    """``params`` of ``compiled`` as its driver takes them: with the statement's own
    constants, each value through its type's bind processor (as SQLAlchemy sends them);
    in order, a tuple, for a positional style (SQLite's ``?``)."""
    values = compiled.construct_params(params)
    for name, process in compiled._bind_processors.items():
        values[name] = process(values[name])
    if compiled.positiontup is None:
        return values
    return tuple(values[name] for name in compiled.positiontup)


def _execute(
    sys_db: Any, conn: Any, statement: Any, params: dict[str, Any], columns: Any = None
) -> Any:
    """``conn.execute(statement, params)``; on SQLite, on a connection of the system
    database's engine, the SQL compiled once is sent as it is (``exec_driver_sql``), without
    SQLAlchemy's per-call work on a statement (its cache lookup, the schema's translation,
    the parameters' processing): ~30 us CPU less a statement. The rows come back as the
    driver gives them, without SQLAlchemy's result processing: fine for the text and integer
    columns every statement sent here reads; a statement reading a Boolean, JSON or
    DateTime column must go through ``conn.execute``."""
    if not sys_db._is_sqlite or getattr(conn, "dialect", None) is not sys_db.engine.dialect:
        return conn.execute(statement, params)
    compiled = _driver_sql(sys_db, statement, columns)
    if compiled.insert_prefetch or compiled.update_prefetch:  # defaults computed in Python
        return conn.execute(statement, params)
    return conn.exec_driver_sql(compiled.string, _driver_params(compiled, params))


def _check_operation_execution(
    self: Any,
    workflow_id: str,
    function_id: int,
    function_name: str,
    *,
    owner_key: str | None = None,
) -> Any:
    """DBOS's ``check_operation_execution``: one query, no transaction around it (or in
    the run store's round trip: :func:`_on_connection`)."""
    with self._own_key(workflow_id, key=owner_key):
        return _on_connection(
            self,
            lambda conn: _check_operation_execution_txn(
                self, workflow_id, function_id, function_name, conn
            ),
        )


def _record_operation_result(
    self: Any,
    result: Any,
    *,
    completed_at_epoch_ms: int | None = None,
    owner_xid: str | None = None,
    owner_key: str | None = None,
) -> None:
    """DBOS's ``record_operation_result``: the ownership check and the insert in one
    statement (in autocommit), retried as DBOS retries it on a lost connection."""
    from dbos._context import current_owner_xid
    from dbos._debug_trigger import DebugTriggers
    from dbos._sys_db import db_retry

    completed_at = (
        int(time.time() * 1000) if completed_at_epoch_ms is None else completed_at_epoch_ms
    )
    workflow_id = result["workflow_uuid"]
    if owner_xid is None:
        owner_xid = current_owner_xid(workflow_id)

    @db_retry(sys_db=self)
    def record() -> None:
        with self._own_key(workflow_id, key=owner_key):
            _on_connection(
                self,
                lambda conn: _record_operation_result_txn(
                    self, result, completed_at, conn, owner_xid=owner_xid
                ),
            )
        DebugTriggers.debug_trigger_point(DebugTriggers.DEBUG_TRIGGER_STEP_COMMIT)

    record()


def _record_params(
    sys_db: Any, statements: dict[str, Any], result: Any, completed_at: int
) -> dict[str, Any]:
    values = {**result, "completed_at_epoch_ms": completed_at}
    values["application_name"] = sys_db.app_name
    return {f"deskwork_{name}": values[name] for name in statements["columns"]}


def _init_workflow(
    self: Any,
    status: Any,
    *,
    creator_xid: str | None,
    reuse_policy: Any = None,
) -> Any:
    """DBOS's ``init_workflow`` in one round trip: its own status insert and checks, with
    the insert of the workflow's input in the same statement (in autocommit) instead of
    BEGIN, the two inserts and COMMIT (four round trips). The input is inserted only when
    the status row is this call's own (its ``creator_xid``): when the workflow existed,
    DBOS's insert of its input (``ON CONFLICT DO NOTHING``, after its checks) finds the
    input that came with the row and inserts nothing either."""
    from dbos._debug_trigger import DebugTriggers
    from dbos._sys_db import SystemDatabase, db_retry

    if creator_xid is None:  # nothing tells this call's row apart: DBOS's own
        dbos_own = SystemDatabase.init_workflow.__wrapped__  # type: ignore[attr-defined]
        return dbos_own(self, status, creator_xid=creator_xid, reuse_policy=reuse_policy)

    @db_retry(sys_db=self)
    def init() -> Any:
        with autocommit(self) as conn:
            started = _StartWithInput(conn, self.schema, status, creator_xid)
            return self._insert_workflow_status(
                status, started, creator_xid=creator_xid, reuse_policy=reuse_policy
            )

    result = init()
    DebugTriggers.debug_trigger_point(DebugTriggers.DEBUG_TRIGGER_INITWF_COMMIT)
    return result


class _StartWithInput:
    """The connection DBOS's ``_insert_workflow_status`` runs its two inserts on: the
    first (the status row, ``RETURNING`` what DBOS checks) is sent with the input's insert
    as one statement; the second (the input) was sent with it, so it sends nothing."""

    def __init__(self, conn: Any, schema: str, status: Any, creator_xid: str) -> None:
        self.conn, self.dialect = conn, conn.dialect
        self.schema, self.status, self.creator_xid = schema, status, creator_xid
        self.sent = False

    def exec_driver_sql(self, sql: str, params: dict[str, Any]) -> Any:
        if self.sent:  # the input: inserted with the status row
            return None
        self.sent = True
        combined = (
            f"WITH deskwork_status AS ({sql}), deskwork_input AS (INSERT INTO"
            f' "{self.schema}".workflow_input (workflow_uuid, inputs)'
            " SELECT %(deskwork_wf)s, %(deskwork_inputs)s FROM deskwork_status"
            " WHERE deskwork_status.creator_xid = %(deskwork_creator)s"
            " ON CONFLICT (workflow_uuid) DO NOTHING) SELECT * FROM deskwork_status"
        )
        extra = {
            "deskwork_wf": self.status["workflow_uuid"],
            "deskwork_inputs": self.status["inputs"],
            "deskwork_creator": self.creator_xid,
        }
        return self.conn.exec_driver_sql(combined, {**params, **extra})


_ONE_ROUND_TRIP: dict[str, Callable[..., Any]] = {
    "check_operation_execution": _check_operation_execution,
    "record_operation_result": _record_operation_result,
    "init_workflow": _init_workflow,
}
"""``SystemDatabase`` methods replaced on PostgreSQL (a transaction's round trips saved)."""


def _check_operation_execution_txn(
    self: Any, workflow_id: str, function_id: int, function_name: str, conn: Any
) -> Any:
    from dbos._error import (
        DBOSUnexpectedStepError,
        DBOSWorkflowCancelledError,
    )
    from dbos._sys_db import WorkflowStatusString

    self._reject_shard_key(workflow_id, None)
    statements = _statements(self)
    rows = _execute(
        self, conn, statements["step"], {"deskwork_wf": workflow_id, "deskwork_fid": function_id}
    ).all()
    assert len(rows) > 0, f"Error: Workflow {workflow_id} does not exist"
    status, recorded_id, output, error, recorded_name, child_workflow_id, serialization = rows[0]
    if status == WorkflowStatusString.CANCELLED.value:
        raise DBOSWorkflowCancelledError(f"Workflow {workflow_id} is cancelled. Aborting function.")
    if recorded_id is None:  # no output recorded for this step
        return None
    if function_name != recorded_name:
        raise DBOSUnexpectedStepError(
            workflow_id=workflow_id,
            step_id=function_id,
            expected_name=function_name,
            recorded_name=recorded_name,
        )
    return {
        "output": output,
        "error": error,
        "serialization": serialization,
        "child_workflow_id": child_workflow_id,
        "child_shard_key": None,
    }


def _check_owner_txn(self: Any, conn: Any, workflow_id: str, owner_xid: str) -> None:
    from dbos._error import DBOSWorkflowConflictIDError

    self._reject_shard_key(workflow_id, None)
    owner = _statements(self)["owner"]
    current = _execute(self, conn, owner, {"deskwork_wf": workflow_id}).scalar()
    if current != owner_xid:
        raise DBOSWorkflowConflictIDError(workflow_id)


def _record_operation_result_txn(
    self: Any,
    result: Any,
    completed_at_epoch_ms: int,
    conn: Any,
    *,
    owner_xid: str | None = None,
    child_values: dict[str, Any] | None = None,
) -> None:
    """DBOS's, with its ownership check and insert as one statement (``owned_record``)."""
    from dbos._context import current_owner_xid
    from dbos._error import DBOSStepNondeterminismError, DBOSWorkflowConflictIDError
    from sqlalchemy.exc import DBAPIError

    assert result["error"] is None or result["output"] is None, (
        "Only one of error or output can be set"
    )
    workflow_id = result["workflow_uuid"]
    if owner_xid is None:
        owner_xid = current_owner_xid(workflow_id)
    self._reject_shard_key(workflow_id, None)
    statements = _statements(self)
    params = _record_params(self, statements, result, completed_at_epoch_ms)
    if owner_xid is not None:
        params["deskwork_wf"], params["deskwork_owner"] = workflow_id, owner_xid
    statement = statements["record" if owner_xid is None else "owned_record"]
    try:
        rows = _execute(self, conn, statement, params).fetchall()
    except DBAPIError as dbapi_error:
        if self._is_unique_constraint_violation(dbapi_error):
            raise DBOSStepNondeterminismError(workflow_id, result["function_id"]) from None
        raise
    if not rows:
        if owner_xid is not None:  # nothing inserted: another execution owns it (or none)
            raise DBOSWorkflowConflictIDError(workflow_id)
        return
    existing = rows[0][0]
    if existing is None or int(existing) != completed_at_epoch_ms:
        raise DBOSStepNondeterminismError(workflow_id, result["function_id"])


def _update_workflow_outcome_in_transaction(
    self: Any,
    workflow_id: str,
    status: str,
    *,
    output: str | None,
    error: str | None,
    owner_xid: str | None,
) -> bool:
    """DBOS's (a workflow's end on SQLite): the status row's ``UPDATE``, and the output's
    upsert only if it landed, in one transaction, with statements built once."""
    self._reject_shard_key(workflow_id, None)
    statements = _statements(self)
    params = {"deskwork_wf": workflow_id, "deskwork_status": status}
    if owner_xid is not None:
        params["deskwork_owner"] = owner_xid
    with self.engine.begin() as conn:
        update = statements["outcome" if owner_xid is None else "owned_outcome"]
        if _execute(self, conn, update, params).rowcount == 0:
            return False  # the outcome was not this execution's to write: no output either
        values = {"deskwork_wf": workflow_id, "deskwork_output": output, "deskwork_error": error}
        _execute(self, conn, statements["output"], values)
        return True


def _execute_prepared(
    self: Any,
    conn: Any,
    name: str,
    values: dict[str, Any],
    build: Callable[[], Any],
    *,
    insert_columns: bool = True,
) -> Any:
    """DBOS's ``_execute_prepared`` (a workflow's start), on SQLite with ``build()``'s
    statement kept per name and set of columns, as DBOS keeps its compiled SQL on
    PostgreSQL (it called ``build()`` on every SQLite call); SQLAlchemy then finds the
    compiled SQL in its cache at once."""
    built: dict[tuple[str, tuple[str, ...]], Any] = _statements(self).setdefault("built", {})
    key = (name, tuple(values))
    statement = built.get(key)
    if statement is None:
        statement = built[key] = build()
    return _execute(self, conn, statement, values, key[1] if insert_columns else None)
