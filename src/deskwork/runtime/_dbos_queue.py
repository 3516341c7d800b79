"""DBOS's queue polling, cheap while a queue is empty.

Every worker process polls each queue it serves (and DBOS's internal queue, where recovered
runs go) every ``QUEUE_POLL_SECONDS``. DBOS claims on each poll: a transaction that builds
and compiles several SQLAlchemy statements, reads the application's latest version, selects
the queue's ``ENQUEUED`` rows ``FOR UPDATE`` (on SQLite under the write lock, see
``_dbos_sqlite``) and commits, whether or not anything waits. An idle worker spent most of its
CPU there (about 60 ms/s of 80 on PostgreSQL), and on SQLite every idle poll took the
database's write lock from the workers that run.

:func:`skip_empty_claims` makes DBOS ask first, in one indexed read outside any transaction
(``idx_workflow_status_in_flight``), whether the queue holds an ``ENQUEUED`` workflow at all,
and claim only when it does. The read matches every row the claim could take (it leaves out
only the claim's own narrower filters: version, application), so a queued run is still
claimed at the same poll; a queue holding runs this worker cannot take claims as before.
For a second after a poll found a run, polls claim without asking (a busy worker, whose
queue holds runs, would only pay the read on top of the claim).
Private DBOS API (``SystemDatabase.dequeue_scopes``, asked once per poll before the claim,
and its tables); a sharded system database keeps DBOS's own scopes.

:func:`poll_when_runs_end` makes a queue's poller look at once when a run of that queue
ends in this process, instead of at its next poll: a worker with a free slot waited up to
``QUEUE_POLL_SECONDS`` (0.1 s on average) for its next run, with runs that take 0.2 s. DBOS's
queue threads wait between polls on the stop event of its queue manager thread; this
module hands them a :class:`_PollEvent` instead, which DBOS stops as before and which also
wakes the poller of one queue (DBOS names it ``queue-worker-<queue>``) when
``ActiveWorkflowById`` lets go of a run of that queue. A wake is never lost: a poller that
was busy when it came polls again as soon as it would wait.

:func:`back_off_while_idle` (a ``deskwork worker``'s queue) makes the poller of an empty
queue wait longer after each poll that finds it empty, up to :data:`IDLE_POLL_SECONDS`: a
run queued on an idle queue starts within about 0.5 s. The first poll that finds a run goes
back to DBOS's interval, and a run ending here still wakes the poller at once.

:func:`prepare_claim_statements` makes the claim itself cheap. DBOS (3.4.0) builds its
SQLAlchemy statements from scratch on every poll of a queue: the queue's row
(``get_queue``, a database-backed queue is read again each poll), the application's latest
version, the ``SELECT ... FOR UPDATE SKIP LOCKED`` of the next workflows, the ``UPDATE``
that starts them and the read of the claimed workflows' statuses
(``get_workflow_statuses``, also behind ``DBOS.get_workflow_status``). Building them and
deriving SQLAlchemy's cache key from them cost more CPU than the queries. Here they are
built once per system database with bind parameters, and the two reads run in autocommit
(one round trip on PostgreSQL instead of three); the claim's transaction, the SQL sent, the
order and the answers are DBOS's (a test compares them). A queue with a limit shared across
workers (``concurrency``, a rate limit, partitions) and a sharded system database keep
DBOS's own claim.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from deskwork._logs import get_stdlib_logger
from deskwork.runtime._dbos_prepared import autocommit

__all__ = [
    "IDLE_POLL_SECONDS",
    "RECOVERY_QUEUE",
    "back_off_while_idle",
    "poll_when_runs_end",
    "prepare_claim_statements",
    "skip_empty_claims",
    "wake",
]

IDLE_POLL_SECONDS = 0.45
"""The longest wait between two polls of an empty queue that backs off (DBOS adds up to 5 %
jitter and the claim's round trips)."""
_IDLE_GROWTH = 1.5
"""How much longer a backing-off poller waits after each poll that found its queue empty."""
_log = get_stdlib_logger("deskwork.durable")
_empty_polls: dict[str, int] = {}
"""Per queue: the polls in a row that found it empty (written by its one poller thread)."""
_BUSY_SECONDS = 1.0
"""After a poll found its queue holding a run, the polls of the next second claim without
asking first (a busy worker's poll costs what DBOS's does, one read a second more)."""
_found_at: dict[str, float] = {}
"""Per queue: when a poll last found it holding a run (``time.monotonic``)."""
_backing_off: set[str] = set()
"""The queues whose pollers back off while they stay empty (:func:`back_off_while_idle`)."""


def back_off_while_idle(queue_name: str) -> None:
    """Poll ``queue_name`` less often while it stays empty (up to :data:`IDLE_POLL_SECONDS`
    between polls); back to DBOS's interval as soon as a poll finds a run."""
    _backing_off.add(queue_name)


RECOVERY_QUEUE = "_dbos_internal_queue"
"""DBOS's internal queue (``dbos._utils.INTERNAL_QUEUE_NAME``), where recovery and takeover
put the runs of dead processes back."""


def wake(queue_name: str) -> None:
    """Make this process's poller of ``queue_name`` poll now (nothing before DBOS launches)."""
    polls = _polls
    if polls is not None:
        polls.wake(queue_name)


def _wait_seconds(queue_name: str, seconds: float) -> float:
    """How long the poller of ``queue_name`` waits where DBOS asks for ``seconds``."""
    if queue_name not in _backing_off:
        return seconds
    empty = min(_empty_polls.get(queue_name, 0), 20)
    return max(seconds, min(IDLE_POLL_SECONDS, seconds * _IDLE_GROWTH**empty))


def _enqueued_query(sys_db: Any) -> Any:
    """``SELECT 1 ... WHERE queue_name = :queue AND status = 'ENQUEUED' LIMIT 1``, built
    once per system database (a reused statement keeps SQLAlchemy's cache key)."""
    query = getattr(sys_db, "_deskwork_enqueued", None)
    if query is None:
        import sqlalchemy as sa

        ws = sys_db.tables.workflow_status
        query = (
            sa.select(sa.literal_column("1"))
            .select_from(ws)
            .where(ws.c.queue_name == sa.bindparam("queue"))
            .where(ws.c.status == "ENQUEUED")
            .where(sys_db._in_flight_status_prover())  # SQLite: use the partial index
            .limit(1)
        )
        sys_db._deskwork_enqueued = query
    return query


def _has_enqueued(sys_db: Any, queue_name: str) -> bool:
    """Whether ``queue_name`` holds an ``ENQUEUED`` workflow (one autocommit read)."""
    with autocommit(sys_db) as conn:
        row = conn.execute(_enqueued_query(sys_db), {"queue": queue_name}).first()
    return row is not None


def skip_empty_claims() -> None:
    """Make DBOS's queue poll claim only when its queue holds a queued workflow (idempotent)."""
    try:
        from dbos._sys_db import SystemDatabase
    except ImportError:  # pragma: no cover - another DBOS version
        return
    original = SystemDatabase.dequeue_scopes
    if getattr(original, "deskwork", False):
        return

    def dequeue_scopes(self: Any, queue_name: str) -> list[str | None]:
        scopes: list[str | None] = original(self, queue_name)
        if scopes != [None] or getattr(self, "sharded", False):
            return scopes  # a sharded database: each scope claims under its own key
        asked = time.monotonic()
        if asked - _found_at.get(queue_name, -_BUSY_SECONDS) < _BUSY_SECONDS:
            return scopes  # a busy queue: claim as DBOS does, without asking first
        try:
            queued = _has_enqueued(self, queue_name)
        except Exception as exc:  # the claim meets the same error and DBOS reports it
            _log.debug("asking whether queue %s holds runs failed: %s", queue_name, exc)
            queued = True
        _empty_polls[queue_name] = 0 if queued else _empty_polls.get(queue_name, 0) + 1
        if queued:
            _found_at[queue_name] = asked
        return scopes if queued else []

    dequeue_scopes.deskwork = True  # type: ignore[attr-defined]
    setattr(SystemDatabase, "dequeue_scopes", dequeue_scopes)  # noqa: B010 - DBOS's class


_POLLER_PREFIX = "queue-worker-"
"""DBOS's name of the thread that polls one queue (``queue-worker-<queue>``)."""


class _PollEvent(threading.Event):
    """The stop event of DBOS's queue threads, which can also wake one queue's poller.

    ``wait`` returns ``True`` once stopped (``set``, or the event it stands in for), and
    ``False`` at its timeout or when the calling thread's queue was woken since it last
    looked: DBOS's poller then polls at once."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self._stop = stop  # DBOS's own event, in case DBOS set it before the swap
        self._changed = threading.Condition(threading.Lock())
        self._stopped = False
        self._woken: dict[str, int] = {}  # per queue: wakes so far
        self._seen: dict[int, int] = {}  # per poller thread: the wakes of its queue it saw

    def is_set(self) -> bool:
        return self._stopped or self._stop.is_set()

    def set(self) -> None:
        self._stop.set()
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    def clear(self) -> None:  # pragma: no cover - DBOS never restarts a stopped thread
        self._stop.clear()
        with self._changed:
            self._stopped = False

    def wake(self, queue_name: str) -> None:
        """Make the poller of ``queue_name`` poll now (or right after its current poll)."""
        with self._changed:
            self._woken[queue_name] = self._woken.get(queue_name, 0) + 1
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        thread = threading.current_thread()
        queue = thread.name[len(_POLLER_PREFIX) :] if thread.name.startswith(_POLLER_PREFIX) else ""
        if queue and timeout is not None:
            timeout = _wait_seconds(queue, timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while not self.is_set():
                if queue:
                    woken, seen = self._woken.get(queue, 0), self._seen.get(thread.ident or 0)
                    self._seen[thread.ident or 0] = woken
                    if seen is not None and seen != woken:
                        return False  # a run of its queue ended: poll now
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(left)
            return True


_polls: _PollEvent | None = None
"""The stop event of this process's DBOS queue threads (``None`` before DBOS launches)."""


def poll_when_runs_end() -> None:
    """Make a queue's poller poll when a run of its queue ends here (idempotent)."""
    try:
        from dbos import _dbos
        from dbos._core import ActiveWorkflowById
    except ImportError:  # pragma: no cover - another DBOS version
        return
    manager: Callable[[threading.Event, Any], None] = vars(_dbos)["queue_thread"]
    if getattr(manager, "deskwork", False):
        return

    def queue_thread(stop: threading.Event, dbos: Any) -> None:
        global _polls
        polls = _PollEvent(stop)
        events: list[threading.Event] = dbos.background_thread_stop_events
        events[:] = [polls if event is stop else event for event in events]
        _polls = polls
        manager(polls, dbos)

    remove = ActiveWorkflowById._remove

    def _remove(self: Any, key: str, bucket: Any) -> None:
        remove(self, key, bucket)
        if bucket is not None:  # a run of a queue: its slot is free
            wake(bucket[0])

    queue_thread.deskwork = True  # type: ignore[attr-defined]
    setattr(_dbos, "queue_thread", queue_thread)  # noqa: B010 - read by DBOS.launch
    setattr(ActiveWorkflowById, "_remove", _remove)  # noqa: B010 - a method of DBOS's class


_CLAIM_HELPERS = (
    "_scoped",
    "_claim_gate",
    "_wf_in",
    "_wf_join",
    "_key_column",
    "_global",
    "_latest_application_version",
)
"""``SystemDatabase`` methods the statements here are built from; a subclass that
overrides one (a sharded one) keeps DBOS's own methods."""
_CHUNK = 4096
"""Workflows flipped per ``UPDATE`` (DBOS's chunk: under SQLite's and libpq's bind limits)."""


def prepare_claim_statements() -> None:
    """Make DBOS's queue claim and its queue read reuse their statements (idempotent)."""
    try:
        from dbos._sys_db import SystemDatabase
    except ImportError:  # pragma: no cover - another DBOS version
        return
    if getattr(SystemDatabase.start_queued_workflows, "deskwork", False):
        return
    patched: dict[str, Callable[..., Any]] = {
        "start_queued_workflows": _start_queued,
        "get_queue": _get_queue,
        "get_workflow_statuses": _get_statuses,
    }
    for name, fast in patched.items():
        original = getattr(SystemDatabase, name)
        setattr(SystemDatabase, name, _when_plain(SystemDatabase, fast, original))


_DBOS_OWN: Any = object()
"""What a fast method answers for a call it leaves to DBOS's own."""


def _when_plain(base: type, fast: Callable[..., Any], original: Callable[..., Any]) -> Any:
    """``fast`` where DBOS's claim helpers are DBOS's own (unless ``fast`` answers
    :data:`_DBOS_OWN`), else DBOS's ``original``."""
    plain: dict[type, bool] = {}

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = type(self)
        if cls not in plain:
            plain[cls] = all(getattr(cls, n) is getattr(base, n) for n in _CLAIM_HELPERS)
        if plain[cls] and not self.sharded:
            answer = fast(self, *args, **kwargs)
            if answer is not _DBOS_OWN:
                return answer
        return original(self, *args, **kwargs)

    method.deskwork = True  # type: ignore[attr-defined]
    method.__wrapped__ = original  # type: ignore[attr-defined]
    method.__name__, method.__doc__ = original.__name__, original.__doc__
    return method


def _claim_statements(sys_db: Any) -> dict[Any, Any]:
    """DBOS's claim statements for a queue without shared limits, built once per system
    database: per ``(latest version, limited)`` the ``SELECT ... FOR UPDATE SKIP LOCKED``
    of the queue's next workflows, ``"flip"`` the ``UPDATE`` that starts them, ``"latest"``
    the application's newest version and ``"queue"`` the queue's row."""
    built: dict[Any, Any] | None = sys_db.__dict__.get("_deskwork_claim")
    if built is not None:
        return built
    import sqlalchemy as sa
    from dbos._sys_db import _MAX_BIGINT

    ws, queues = sys_db.tables.workflow_status, sys_db.tables.queues
    version: Any = sa.bindparam("deskwork_version", type_=ws.c.application_version.type)
    mine = sys_db._name_filter(ws.c.application_name, sys_db.app_name)
    built = {
        "queue": sa.select(queues).where(
            *sys_db._global(queues), queues.c.name == sa.bindparam("deskwork_queue")
        ),
        "latest": _latest_version_query(sys_db),
        "max": _MAX_BIGINT,
        "statuses": _statuses_query(sys_db),
    }
    for latest in (False, True):
        same = ws.c.application_version == version
        query = (
            sa.select(ws.c.workflow_uuid)
            .select_from(ws)
            .where(*sys_db._scoped(ws))
            .where(ws.c.queue_name == sa.bindparam("deskwork_queue"))
            .where(ws.c.status == "ENQUEUED")
            .where(sys_db._in_flight_status_prover())
            .where(sa.or_(same, ws.c.application_version.is_(None)) if latest else same)
            .where(mine)
            .with_for_update(skip_locked=True, nowait=False)
            .order_by(ws.c.priority.asc(), ws.c.created_at.asc())
        )
        built[latest, False] = query
        built[latest, True] = query.limit(sa.bindparam("deskwork_limit", type_=sa.Integer))
    start: Any = sa.bindparam("deskwork_start", type_=ws.c.workflow_timeout_ms.type)
    cap: Any = sa.bindparam("deskwork_cap", type_=ws.c.workflow_timeout_ms.type)
    built["flip"] = (
        ws.update()
        .where(ws.c.workflow_uuid.in_(sa.bindparam("deskwork_ids", expanding=True)))
        .where(ws.c.status == "ENQUEUED")
        .where(mine)
        .values(
            status="PENDING",
            owner_xid=sa.bindparam("deskwork_owner"),
            application_version=version,
            executor_id=sa.bindparam("deskwork_executor"),
            application_name=sys_db.app_name,
            started_at_epoch_ms=sys_db._now_ms_sql(),
            rate_limited=False,  # no rate limit: DBOS's own claim takes a limited queue
            recovery_attempts=ws.c.recovery_attempts + 1,
            updated_at=sys_db._now_ms_sql(),
            workflow_deadline_epoch_ms=sa.case(
                (
                    sa.and_(
                        ws.c.workflow_timeout_ms.isnot(None),
                        ws.c.workflow_deadline_epoch_ms.is_(None),
                    ),
                    sa.case(
                        (ws.c.workflow_timeout_ms > cap, _MAX_BIGINT),
                        else_=start + ws.c.workflow_timeout_ms,
                    ),
                ),
                else_=ws.c.workflow_deadline_epoch_ms,
            ),
        )
        .returning(ws.c.workflow_uuid)
    )
    sys_db.__dict__["_deskwork_claim"] = built
    return built


def _latest_version_query(sys_db: Any) -> Any:
    """DBOS's ``_latest_application_version`` query of this system database's application."""
    import sqlalchemy as sa

    av = sys_db.tables.application_versions
    columns = [
        av.c.version_id,
        av.c.version_name,
        av.c.version_timestamp,
        av.c.created_at,
        av.c.application_name,
    ]
    if not sys_db.app_name:
        query: Any = sa.select(*columns).where(*sys_db._global(av))
        return query.order_by(av.c.version_timestamp.desc()).limit(1)
    probes = [
        sa.select(*columns)
        .where(*sys_db._global(av))
        .where(owner)
        .order_by(av.c.application_name, av.c.version_timestamp.desc())
        .limit(1)
        .subquery()
        for owner in (av.c.application_name == sys_db.app_name, av.c.application_name.is_(None))
    ]
    query = sa.union_all(*(sa.select(*probe.c) for probe in probes))
    return query.order_by(sa.desc("version_timestamp")).limit(1)


def _shares_budget(queue: Any) -> bool:
    """Whether ``queue`` has a limit shared across workers (DBOS's own claim takes it)."""
    return (
        queue._concurrency is not None
        or queue._partition_concurrency is not None
        or queue._limiter is not None
        or queue._partition_limiter is not None
    )


def _start_queued(
    self: Any,
    queue: Any,
    executor_id: str,
    app_version: str,
    queue_partition_key: str | None,
    local_running_count: int = 0,
    partition_local_running_count: int = 0,
    *,
    owner_xid: str | None = None,
    is_latest_version: bool | None = None,
) -> Any:
    """DBOS's ``start_queued_workflows`` with statements built once, for a queue without
    shared limits or partition (DBOS claims the others): the same transaction, SQL, order
    and answers as DBOS's."""
    if queue_partition_key is not None or _shares_budget(queue):
        return _DBOS_OWN
    start_time_ms = int(time.time() * 1000)
    statements = _claim_statements(self)
    with self._begin(None) as c:
        max_tasks = sys.maxsize
        if queue._worker_concurrency is not None:
            max_tasks = min(max_tasks, max(0, queue._worker_concurrency - local_running_count))
            if max_tasks <= 0:
                return [], "worker_concurrency"
        if queue._partition_worker_concurrency is not None:
            room = queue._partition_worker_concurrency - partition_local_running_count
            max_tasks = min(max_tasks, max(0, room))
            if max_tasks <= 0:
                return [], "partition_worker_concurrency"
        if is_latest_version is None:
            latest = c.execute(statements["latest"]).fetchone()
            is_latest_version = latest is None or latest.version_name == app_version
        limited = max_tasks != sys.maxsize
        params: dict[str, Any] = {"deskwork_queue": queue.name, "deskwork_version": app_version}
        if limited:
            params["deskwork_limit"] = int(max_tasks)
        rows = c.execute(statements[bool(is_latest_version), limited], params).fetchall()
        dequeued: list[str] = [row[0] for row in rows]
        if dequeued:
            from dbos._logger import dbos_logger

            dbos_logger.debug(f"[{queue.name}] dequeueing {len(dequeued)} task(s)")
        claimed: set[str] = set()
        flip = {
            "deskwork_owner": owner_xid,
            "deskwork_version": app_version,
            "deskwork_executor": executor_id,
            "deskwork_start": start_time_ms,
            "deskwork_cap": statements["max"] - start_time_ms,
        }
        for first in range(0, len(dequeued), _CHUNK):
            chunk = dequeued[first : first + _CHUNK]
            for workflow_id in chunk:
                self._reject_shard_key(workflow_id, None)
            flipped = c.execute(statements["flip"], {**flip, "deskwork_ids": chunk}).fetchall()
            claimed.update(row[0] for row in flipped)
        return [workflow_id for workflow_id in dequeued if workflow_id in claimed], None


def _get_queue(self: Any, name: str, *, client_system_database: Any = None) -> Any:
    """DBOS's ``get_queue`` with its statement built once."""
    from dbos._sys_db import queue_from_db_row

    with autocommit(self) as c:
        row = c.execute(_claim_statements(self)["queue"], {"deskwork_queue": name}).fetchone()
    if row is None:
        return None
    return queue_from_db_row(row, client_system_database=client_system_database)


_STATUS_FIELDS = (
    "workflow_uuid",
    "status",
    "name",
    "recovery_attempts",
    "config_name",
    "class_name",
    "authenticated_user",
    "authenticated_roles",
    "assumed_role",
    "queue_name",
    "executor_id",
    "created_at",
    "updated_at",
    ("app_version", "application_version"),
    ("app_id", "application_id"),
    "workflow_deadline_epoch_ms",
    "workflow_timeout_ms",
    "deduplication_id",
    "priority",
    "inputs",
    "queue_partition_key",
    "forked_from",
    "parent_workflow_id",
    "started_at_epoch_ms",
    "serialization",
    "delay_until_epoch_ms",
    "attributes",
    "schedule_name",
    "debounce_deadline_epoch_ms",
    "is_debounced",
    "application_name",
)
"""The fields of DBOS's ``WorkflowStatusInternal`` read from a row, in DBOS's order (a
pair: the field and its column)."""


def _column(field: str | tuple[str, str]) -> str:
    return field if isinstance(field, str) else field[1]


def _statuses_query(sys_db: Any) -> Any:
    """DBOS's ``get_workflow_statuses`` query, the workflows' ids one expanding parameter."""
    import sqlalchemy as sa

    ws, inputs = sys_db.tables.workflow_status, sys_db.tables.workflow_input
    columns = [
        sa.func.coalesce(inputs.c.inputs, ws.c.inputs).label("inputs")
        if _column(field) == "inputs"
        else ws.c[_column(field)]
        for field in _STATUS_FIELDS
    ]
    return (
        sa.select(*columns)
        .select_from(ws.outerjoin(inputs, sys_db._wf_join(ws, inputs)))
        .where(ws.c.workflow_uuid.in_(sa.bindparam("deskwork_ids", expanding=True)))
    )


def _get_statuses(self: Any, workflow_ids: list[str]) -> list[dict[str, Any]]:
    """DBOS's ``get_workflow_statuses`` with its statement built once, each chunk one
    autocommit read (retried as DBOS retries it)."""
    from dbos._sys_db import db_retry

    query = _claim_statements(self)["statuses"]

    @db_retry(sys_db=self)
    def fetch_chunk(chunk: list[str]) -> list[dict[str, Any]]:
        for workflow_id in chunk:
            self._reject_shard_key(workflow_id, None)
        with autocommit(self) as c:
            rows = c.execute(query, {"deskwork_ids": chunk}).fetchall()
        return [_status(row._mapping) for row in rows]

    found: dict[str, dict[str, Any]] = {}
    for first in range(0, len(workflow_ids), _CHUNK):
        for status in fetch_chunk(workflow_ids[first : first + _CHUNK]):
            found[status["workflow_uuid"]] = status
    return [found[workflow_id] for workflow_id in workflow_ids if workflow_id in found]


def _status(row: Any) -> dict[str, Any]:
    """DBOS's ``WorkflowStatusInternal`` of a row of :func:`_statuses_query`."""
    status = {
        field if isinstance(field, str) else field[0]: row[_column(field)]
        for field in _STATUS_FIELDS
    }
    status["is_debounced"] = bool(status["is_debounced"])
    status["shard_key"] = None
    return status
