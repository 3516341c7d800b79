"""DBOS's step checkpoint methods with statements built once (``_dbos_prepared``): the same
answers and errors as DBOS's own, on SQLite and PostgreSQL, and a loud failure when DBOS
changes the shape the patch relies on."""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from dbos import DBOS
from dbos._context import SetWorkflowID
from dbos._error import (
    DBOSStepNondeterminismError,
    DBOSUnexpectedStepError,
    DBOSWorkflowCancelledError,
    DBOSWorkflowConflictIDError,
)
from dbos._outcome import Pending
from dbos._sys_db import SystemDatabase
from durablekit import launched_system_database

from deskwork.runtime._dbos_prepared import prepare_step_statements

METHODS = {
    "_check_operation_execution_txn": [
        "self",
        "workflow_id",
        "function_id",
        "function_name",
        "conn",
    ],
    "_check_owner_txn": ["self", "conn", "workflow_id", "owner_xid"],
    "_record_operation_result_txn": [
        "self",
        "result",
        "completed_at_epoch_ms",
        "conn",
        "owner_xid",
        "child_values",
    ],
    "check_operation_execution": [
        "self",
        "workflow_id",
        "function_id",
        "function_name",
        "owner_key",
    ],
    "record_operation_result": [
        "self",
        "result",
        "completed_at_epoch_ms",
        "owner_xid",
        "owner_key",
    ],
    "init_workflow": ["self", "status", "creator_xid", "reuse_policy"],
}


@DBOS.workflow(name="deskwork.test.prepared")
def _idle() -> str:
    return "done"


def test_dbos_keeps_the_shape_the_patch_relies_on() -> None:
    prepare_step_statements()
    for name, parameters in METHODS.items():
        patched = getattr(SystemDatabase, name)
        assert getattr(patched, "deskwork", False), f"{name} is not patched"
        assert list(inspect.signature(patched.__wrapped__).parameters) == parameters, name
    for helper in ("_wf", "_wf_values", "_child_values", "_key_column", "_key_conflict"):
        assert callable(getattr(SystemDatabase, helper)), helper
    assert callable(SystemDatabase._reject_shard_key) and callable(SystemDatabase._now_ms_sql)
    insert = inspect.signature(SystemDatabase._insert_workflow_status).parameters
    assert list(insert) == ["self", "status", "conn", "creator_xid", "reuse_policy"]
    then = Pending.then
    assert getattr(then, "deskwork", False), "Pending.then is not patched"
    assert list(inspect.signature(then.__wrapped__).parameters) == ["self", "next", "dbos"]
    assert list(inspect.signature(Pending._wrap).parameters) == ["func", "before", "dbos"]


def test_pending_then_without_its_idle_hop_hands_on_values_and_errors() -> None:
    """``Pending.then`` without its idle hop: the stage gets the value or the error, on a
    worker thread (not the event loop's), and its answer (or what it raises) is the outcome."""
    import asyncio
    import threading

    prepare_step_statements()
    on_loop_thread: list[bool] = []

    def stage(result: Any) -> str:
        on_loop_thread.append(threading.current_thread() is main)
        return f"recorded {result()}"

    async def value() -> str:
        return "v"

    async def failing() -> str:
        raise ValueError("boom")

    main = threading.current_thread()
    assert asyncio.run(Pending(value).then(stage)()) == "recorded v"
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(Pending(failing).then(stage)())
    assert on_loop_thread == [False, False]


@pytest.fixture(params=["sqlite", "postgres"])
def sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """DBOS's system database of a durable desk, with one finished workflow in it."""
    yield from launched_system_database(request, tmp_path)


@pytest.fixture(params=["postgres"])
def postgres_sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """:func:`sys_db` on PostgreSQL alone, for what only a PostgreSQL run store does (a
    SQLite one commits a run's events at once and carries none with a checkpoint)."""
    yield from launched_system_database(request, tmp_path)


def _workflow() -> str:
    workflow_id = f"prepared-{uuid.uuid4().hex[:8]}"
    with SetWorkflowID(workflow_id):
        assert _idle() == "done"
    return workflow_id


def _both(sys_db: Any, name: str, *args: Any, **kwargs: Any) -> list[Any]:
    """What the patched method and DBOS's own answer (or raise) for the same call."""
    answers: list[Any] = []
    for method in (getattr(SystemDatabase, name), getattr(SystemDatabase, name).__wrapped__):
        with sys_db.engine.begin() as conn:
            try:
                answers.append(
                    method(sys_db, *args, conn, **kwargs)
                    if name != "_check_owner_txn"
                    else method(sys_db, conn, *args, **kwargs)
                )
            except BaseException as exc:  # some DBOS errors are BaseExceptions
                answers.append(type(exc))
    return answers


def _step(workflow_id: str, function_id: int, output: str) -> dict[str, Any]:
    return {
        "workflow_uuid": workflow_id,
        "function_id": function_id,
        "function_name": "deskwork.test.step",
        "output": output,
        "error": None,
        "serialization": "py_pickle",
        "started_at_epoch_ms": int(time.time() * 1000),
        "child_workflow_id": None,
    }


def test_a_recorded_step_reads_back_as_dbos_reads_it(sys_db: Any) -> None:
    workflow_id = _workflow()
    with sys_db.engine.begin() as conn:
        SystemDatabase._record_operation_result_txn(
            sys_db, _step(workflow_id, 7, "out"), 1234, conn, owner_xid=None
        )
    fast, own = _both(
        sys_db, "_check_operation_execution_txn", workflow_id, 7, "deskwork.test.step"
    )
    assert fast == own and fast["output"] == "out" and fast["serialization"] == "py_pickle"
    assert _both(sys_db, "_check_operation_execution_txn", workflow_id, 8, "x") == [None, None]
    unknown = _both(sys_db, "_check_operation_execution_txn", "no-such-workflow", 1, "x")
    assert unknown == [AssertionError] * 2
    renamed = _both(sys_db, "_check_operation_execution_txn", workflow_id, 7, "another")
    assert renamed == [DBOSUnexpectedStepError] * 2
    # recorded again at another time: DBOS's nondeterminism error, from either
    again = _both(sys_db, "_record_operation_result_txn", _step(workflow_id, 7, "o"), 99)
    assert again == [DBOSStepNondeterminismError] * 2
    with sys_db.engine.begin() as conn:
        rows = (
            conn.execute(
                sys_db.tables.operation_outputs.select().where(
                    sys_db.tables.operation_outputs.c.workflow_uuid == workflow_id
                )
            )
            .mappings()
            .all()
        )
    assert [(r["function_id"], r["output"], r["completed_at_epoch_ms"]) for r in rows] == [
        (7, "out", 1234)
    ]
    assert rows[0]["retention_timestamp"] is not None and rows[0]["application_name"]


def test_ownership_and_cancellation_are_checked_as_dbos_checks_them(sys_db: Any) -> None:
    workflow_id = _workflow()
    owner = sys_db.get_workflow_owner(workflow_id)
    assert _both(sys_db, "_check_owner_txn", workflow_id, owner) == [None, None]
    stolen = _both(sys_db, "_check_owner_txn", workflow_id, "someone-else")
    assert stolen == [DBOSWorkflowConflictIDError] * 2
    recorded = _both(
        sys_db, "_record_operation_result_txn", _step(workflow_id, 3, "o"), 5, owner_xid="other"
    )
    assert recorded == [DBOSWorkflowConflictIDError] * 2
    status = sys_db.tables.workflow_status
    with sys_db.engine.begin() as conn:  # as a cancel leaves a running workflow
        conn.execute(
            status.update().where(status.c.workflow_uuid == workflow_id).values(status="CANCELLED")
        )
    cancelled = _both(sys_db, "_check_operation_execution_txn", workflow_id, 1, "x")
    assert cancelled == [DBOSWorkflowCancelledError] * 2


def _outcome(call: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``call(*args, **kwargs)`` returns, or the type of what it raises."""
    try:
        return call(*args, **kwargs)
    except BaseException as exc:  # some DBOS errors are BaseExceptions
        return type(exc)


def _outputs(sys_db: Any, workflow_id: str) -> list[tuple[int, str, int]]:
    table = sys_db.tables.operation_outputs
    with sys_db.engine.begin() as conn:
        rows = conn.execute(
            sa.select(table.c.function_id, table.c.output, table.c.completed_at_epoch_ms)
            .where(table.c.workflow_uuid == workflow_id)
            .order_by(table.c.function_id)
        ).all()
    return [tuple(row) for row in rows]


def _owned_workflow(sys_db: Any, owner: str) -> str:
    """A finished workflow whose ownership token is ``owner`` (as a running one has)."""
    workflow_id = _workflow()
    status = sys_db.tables.workflow_status
    with sys_db.engine.begin() as conn:
        conn.execute(
            status.update().where(status.c.workflow_uuid == workflow_id).values(owner_xid=owner)
        )
    return workflow_id


def _record_all_ways(sys_db: Any, method: Any, workflow_id: str, function_id: int) -> list[Any]:
    """What ``method`` (a ``record_operation_result``) answers: a first record, the same
    again (a retried commit), the same step at another time, a record by another owner, one
    with no owner to check, and one of an unknown workflow."""
    step = _step(workflow_id, function_id, f"out{function_id}")
    calls: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (step, {"completed_at_epoch_ms": 100, "owner_xid": "me"}),
        (step, {"completed_at_epoch_ms": 100, "owner_xid": "me"}),
        (step, {"completed_at_epoch_ms": 101, "owner_xid": "me"}),
        (_step(workflow_id, function_id + 10, "no"), {"owner_xid": "someone-else"}),
        (_step(workflow_id, function_id + 20, "plain"), {"completed_at_epoch_ms": 7}),
        (_step("no-such-workflow", 1, "no"), {"owner_xid": "me"}),
    ]
    return [_outcome(method, sys_db, result, **kwargs) for result, kwargs in calls]


def test_a_step_checkpoint_in_one_round_trip_answers_as_dbos_does(sys_db: Any) -> None:
    """The whole-transaction methods (PostgreSQL: autocommit, ownership check and insert in
    one statement) record, refuse and read back as DBOS's own, and write nothing they refuse."""
    record = SystemDatabase.record_operation_result
    check = SystemDatabase.check_operation_execution
    workflow_id = _owned_workflow(sys_db, "me")
    fast = _record_all_ways(sys_db, record, workflow_id, 1)
    own = _record_all_ways(sys_db, record.__wrapped__, workflow_id, 2)
    assert (
        fast
        == own
        == [
            None,
            None,
            DBOSStepNondeterminismError,
            DBOSWorkflowConflictIDError,
            None,
            DBOSWorkflowConflictIDError,
        ]
    )
    assert _outputs(sys_db, workflow_id) == [
        (1, "out1", 100),
        (2, "out2", 100),
        (21, "plain", 7),
        (22, "plain", 7),
    ]
    for args in [
        (workflow_id, 1, "deskwork.test.step"),
        (workflow_id, 3, "x"),
        (workflow_id, 1, "y"),
    ]:
        answers = [_outcome(m, sys_db, *args) for m in (check, check.__wrapped__)]
        assert answers[0] == answers[1], args
    assert _outcome(check, sys_db, "no-such-workflow", 1, "x") is AssertionError


def test_a_waiters_reads_answer_as_dbos_does(sys_db: Any) -> None:
    """The status a waiting process polls and the resume workflows of a run: DBOS's own
    answers (``get_workflow_status``, ``list_workflows`` by prefix), LIKE's wildcards in a
    run id matched as plain characters."""
    from deskwork.runtime._dbos_prepared import resume_ids, workflow_state

    done = _workflow()
    status = DBOS.get_workflow_status(done)
    assert status is not None and workflow_state(done) == status.status == "SUCCESS"
    assert workflow_state("no-such-workflow") is None
    run_id = f"r_%/{uuid.uuid4().hex[:6]}"
    ids = [f"{run_id}.resume.{n}" for n in (1, 2)]
    for workflow_id in [*ids, f"rX%/{run_id[4:]}.resume.3", f"{run_id}.other.4"]:
        with SetWorkflowID(workflow_id):
            _idle()
    dbos_ids = DBOS.list_workflows(
        workflow_id_prefix=f"{run_id}.resume.", load_input=False, load_output=False
    )
    assert sorted(resume_ids(run_id)) == sorted(w.workflow_id for w in dbos_ids) == ids


def _started_status(sys_db: Any) -> dict[str, Any]:
    """The status DBOS hands ``init_workflow`` when a workflow starts (captured)."""
    seen: list[dict[str, Any]] = []
    original = SystemDatabase.init_workflow

    def capture(self: Any, status: Any, **kwargs: Any) -> Any:
        seen.append(dict(status))
        return original(self, status, **kwargs)

    SystemDatabase.init_workflow = capture  # type: ignore[method-assign]
    try:
        _workflow()
    finally:
        SystemDatabase.init_workflow = original  # type: ignore[method-assign]
    return seen[0]


def _inputs(sys_db: Any, workflow_id: str) -> list[Any]:
    table = sys_db.tables.workflow_input
    with sys_db.engine.begin() as conn:
        query = sa.select(table.c.inputs).where(table.c.workflow_uuid == workflow_id)
        return list(conn.execute(query).scalars())


def test_a_workflow_start_in_one_statement_answers_as_dbos_does(sys_db: Any) -> None:
    """The start of a workflow (its status row and its input in one statement on
    PostgreSQL): a new workflow, the same id started again (by another caller, or a retry
    of this one's), and a clash with another function's workflow answer and store as DBOS's
    own ``init_workflow`` does."""
    from dbos._error import DBOSConflictingWorkflowError

    base = _started_status(sys_db)
    ours, own = SystemDatabase.init_workflow, SystemDatabase.init_workflow.__wrapped__
    for method in (ours, own):
        status = {**base, "workflow_uuid": f"start-{uuid.uuid4().hex[:8]}", "inputs": "in-1"}
        workflow_id = status["workflow_uuid"]
        assert method(sys_db, dict(status), creator_xid="c1") == ("PENDING", True)
        assert _inputs(sys_db, workflow_id) == ["in-1"]
        assert method(sys_db, dict(status), creator_xid="c1") == ("PENDING", True)  # retried
        again = {**status, "inputs": "in-2"}
        assert method(sys_db, again, creator_xid="c2") == ("PENDING", False)
        assert _inputs(sys_db, workflow_id) == ["in-1"]
        with pytest.raises(DBOSConflictingWorkflowError):
            method(sys_db, {**status, "name": "another"}, creator_xid="c3")
        row = sys_db.get_workflow_status(workflow_id)
        assert row["name"] == base["name"] and sys_db.get_workflow_owner(workflow_id) == "c1"
        clean = {**status, "workflow_uuid": f"start-{uuid.uuid4().hex[:8]}", "name": "x"}
        assert method(sys_db, clean, creator_xid=None)[1] is True  # DBOS's own path


def test_a_checkpoint_through_the_run_store_answers_as_dbos_does(
    postgres_sys_db: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL, inside a run store's ``carried`` (a durable run whose store is on DBOS's
    database): the step checkpoints sent through the store (with its pending events, or
    alone) record, refuse and read back as DBOS's own, and carry the events."""
    import asyncio

    from deskwork import Event
    from deskwork.store.postgres import PostgresRunStore
    from deskwork.utils import utc_now

    sys_db = postgres_sys_db
    store = PostgresRunStore(request.getfixturevalue("postgres_database"))
    sent: list[str] = []
    commit_with = store.commit_with
    monkeypatch.setattr(
        store, "commit_with", lambda sql, p: sent.append(sql) or commit_with(sql, p)
    )
    record = SystemDatabase.record_operation_result
    check = SystemDatabase.check_operation_execution
    workflow_id = _owned_workflow(sys_db, "me")
    store.create_run("carried", None)
    event = Event(event_id="e0", type="custom", timestamp=utc_now(), run_id="carried", source="s")
    checks = [(workflow_id, 1, "deskwork.test.step"), (workflow_id, 3, "x"), (workflow_id, 1, "y")]

    async def carried() -> tuple[list[Any], list[Any]]:
        with store.carried(lambda: True):
            store.add_event(event)  # pending: the first checkpoint carries it
            fast = _record_all_ways(sys_db, record, workflow_id, 1)
            return fast, [_outcome(check, sys_db, *args) for args in checks]

    try:
        fast, fast_checks = asyncio.run(carried())
        own = _record_all_ways(sys_db, record.__wrapped__, workflow_id, 2)
        assert fast == own
        assert fast_checks == [_outcome(check.__wrapped__, sys_db, *args) for args in checks]
        assert _outputs(sys_db, workflow_id) == [
            (1, "out1", 100),
            (2, "out2", 100),
            (21, "plain", 7),
            (22, "plain", 7),
        ]
        assert len(sent) == 9  # six records, three checks: all through the store
        assert [e.event_id for e in store.get_events("carried")] == ["e0"]
    finally:
        store.close()
