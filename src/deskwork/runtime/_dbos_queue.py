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
Private DBOS API (``SystemDatabase.dequeue_scopes``, asked once per poll before the claim,
and its tables); a sharded system database keeps DBOS's own scopes.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["skip_empty_claims"]

_log = logging.getLogger("deskwork.durable")


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
    with sys_db.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
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
        try:
            return scopes if _has_enqueued(self, queue_name) else []
        except Exception as exc:  # the claim meets the same error and DBOS reports it
            _log.debug("asking whether queue %s holds runs failed: %s", queue_name, exc)
            return scopes

    dequeue_scopes.deskwork = True  # type: ignore[attr-defined]
    setattr(SystemDatabase, "dequeue_scopes", dequeue_scopes)  # noqa: B010 - DBOS's class
