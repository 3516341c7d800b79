"""DBOS's queue claim with statements built once (``_dbos_queue.prepare_claim_statements``):
the same SQL, answers and claimed rows as DBOS's own ``start_queued_workflows`` and
``get_queue``, on SQLite and PostgreSQL, and a loud failure when DBOS changes them."""

from __future__ import annotations

import inspect
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from dbos import DBOS
from dbos._context import SetWorkflowID
from dbos._dbos import GlobalParams
from dbos._sys_db import SystemDatabase
from durablekit import launched_system_database

from deskwork.runtime._dbos_queue import prepare_claim_statements

SIGNATURES = {
    "start_queued_workflows": [
        "self",
        "queue",
        "executor_id",
        "app_version",
        "queue_partition_key",
        "local_running_count",
        "partition_local_running_count",
        "owner_xid",
        "is_latest_version",
    ],
    "get_queue": ["self", "name", "client_system_database"],
    "get_workflow_statuses": ["self", "workflow_ids"],
}


@DBOS.workflow(name="deskwork.test.claim")
def _finished() -> str:
    return "done"


def test_dbos_keeps_the_shape_the_patch_relies_on() -> None:
    prepare_claim_statements()
    for name, parameters in SIGNATURES.items():
        patched = getattr(SystemDatabase, name)
        assert getattr(patched, "deskwork", False), f"{name} is not patched"
        assert list(inspect.signature(patched.__wrapped__).parameters) == parameters, name
    for helper in ("_scoped", "_claim_gate", "_wf_in", "_global", "_name_filter", "_begin"):
        assert callable(getattr(SystemDatabase, helper)), helper


@pytest.fixture(params=["sqlite", "postgres"])
def sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """DBOS's system database of a durable desk (DBOS launched, serving no queue)."""
    yield from launched_system_database(request, tmp_path, queues=[])


def _sql_sent(sys_db: Any, call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``call()`` answers (or the type it raises), and the SQL it sent (bind
    parameters' names left out: they are the only difference allowed). DBOS's own threads
    use the engine meanwhile: only this thread's statements count."""
    sent: list[str] = []
    caller = threading.get_ident()

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.get_ident() == caller:
            sent.append(re.sub(r"%\(\w+\)s", "?", statement))

    sa.event.listen(sys_db.engine, "before_cursor_execute", note)
    try:
        answer = call()
    except BaseException as exc:  # some DBOS errors are BaseExceptions
        answer = type(exc)
    finally:
        sa.event.remove(sys_db.engine, "before_cursor_execute", note)
    return answer, sent


def _queued(sys_db: Any, queue: str) -> list[str]:
    """Three finished workflows, each put back on ``queue``: of this version with a timeout,
    of no version, and of another version."""
    ids = []
    for _ in range(3):
        workflow_id = f"claim-{uuid.uuid4().hex[:8]}"
        with SetWorkflowID(workflow_id):
            assert _finished() == "done"
        ids.append(workflow_id)
    return ids


def _requeue(sys_db: Any, queue: str, ids: list[str]) -> None:
    ws = sys_db.tables.workflow_status
    versions = [GlobalParams.app_version, None, "another-version"]
    with sys_db.engine.begin() as conn:
        for priority, (workflow_id, version) in enumerate(zip(ids, versions, strict=True)):
            conn.execute(
                ws.update()
                .where(ws.c.workflow_uuid == workflow_id)
                .values(
                    status="ENQUEUED",
                    queue_name=queue,
                    priority=priority,
                    application_version=version,
                    executor_id="nobody",
                    owner_xid=None,
                    recovery_attempts=0,
                    workflow_timeout_ms=60_000 if priority == 0 else None,
                    workflow_deadline_epoch_ms=None,
                    started_at_epoch_ms=None,
                )
            )


def _rows(sys_db: Any, ids: list[str]) -> list[tuple[Any, ...]]:
    ws = sys_db.tables.workflow_status
    with sys_db.engine.begin() as conn:
        rows = conn.execute(
            sa.select(
                ws.c.status,
                ws.c.owner_xid,
                ws.c.executor_id,
                ws.c.application_version,
                ws.c.application_name,
                ws.c.recovery_attempts,
                ws.c.rate_limited,
                ws.c.workflow_deadline_epoch_ms.is_not(None),
                ws.c.started_at_epoch_ms.is_not(None),
            )
            .where(ws.c.workflow_uuid.in_(ids))
            .order_by(ws.c.priority)
        ).all()
    return [tuple(row) for row in rows]


CASES = [
    # (queue settings, this worker's running runs, the claimer's version or None: latest)
    ({}, 0, None),
    ({"worker_concurrency": 1}, 0, None),
    ({"worker_concurrency": 1}, 1, None),
    ({"worker_concurrency": 5}, 2, "another-version"),
    ({"global_concurrency": 2}, 0, None),  # a shared limit: DBOS's own claim
]


@pytest.mark.parametrize(("settings", "running", "version"), CASES)
def test_a_claim_sends_and_answers_what_dbos_does(
    sys_db: Any, settings: dict[str, int], running: int, version: str | None
) -> None:
    name = f"claim-{uuid.uuid4().hex[:8]}"
    DBOS.register_queue(name, polling_interval_sec=0.2, **settings)
    ids = _queued(sys_db, name)
    method = SystemDatabase.start_queued_workflows
    outcomes = []
    for claim in (method, method.__wrapped__):
        _requeue(sys_db, name, ids)
        queue = sys_db.get_queue(name)
        answer, sent = _sql_sent(
            sys_db,
            lambda claim=claim, queue=queue: claim(
                sys_db,
                queue,
                "executor-x",
                version or GlobalParams.app_version,
                None,
                running,
                owner_xid="owner-x",
            ),
        )
        outcomes.append((answer, sent, _rows(sys_db, ids)))
    assert outcomes[0] == outcomes[1]
    answer, sent, rows = outcomes[0]
    claimed = {"claimed": answer[0], "stopped": answer[1]}
    if running and not version:
        assert claimed == {"claimed": [], "stopped": "worker_concurrency"}
        assert not [statement for statement in sent if "workflow_status" in statement]
    elif version:  # not the latest version: only its own workflows
        assert claimed == {"claimed": [ids[2]], "stopped": None}
        assert rows[2][:3] == ("PENDING", "owner-x", "executor-x")
    else:
        expected = ids[:1] if settings.get("worker_concurrency") == 1 else ids[:2]
        assert claimed == {"claimed": expected, "stopped": None}
        assert rows[0][:3] == ("PENDING", "owner-x", "executor-x") and rows[0][7]  # deadline


def test_a_queue_reads_back_as_dbos_reads_it(sys_db: Any) -> None:
    name = f"claim-{uuid.uuid4().hex[:8]}"
    DBOS.register_queue(name, worker_concurrency=3, polling_interval_sec=0.3)
    method = SystemDatabase.get_queue
    for queue_name in (name, "no-such-queue"):
        (fast, fast_sql), (own, own_sql) = (
            _sql_sent(sys_db, lambda m=m, q=queue_name: m(sys_db, q))
            for m in (method, method.__wrapped__)
        )
        assert fast_sql == own_sql
        if queue_name != name:
            assert fast is None and own is None
            continue
        assert fast is not None and own is not None
        assert vars(fast) == vars(own) and fast._worker_concurrency == 3


def test_statuses_read_back_as_dbos_reads_them(sys_db: Any) -> None:
    name = f"claim-{uuid.uuid4().hex[:8]}"
    ids = _queued(sys_db, name)
    _requeue(sys_db, name, ids)
    asked = [ids[2], "no-such-workflow", ids[0], ids[1]]
    method = SystemDatabase.get_workflow_statuses
    (fast, fast_sql), (own, own_sql) = (
        _sql_sent(sys_db, lambda m=m: m(sys_db, asked)) for m in (method, method.__wrapped__)
    )
    assert fast == own and fast_sql == own_sql
    assert [status["workflow_uuid"] for status in fast] == [ids[2], ids[0], ids[1]]
    assert fast[1]["workflow_timeout_ms"] == 60_000 and fast[0]["app_version"] == "another-version"
    assert fast[0]["inputs"] is not None and fast[0]["is_debounced"] is False
