"""A workflow's end write and its start on SQLite with statements built once
(``_dbos_prepared``): the same rows, answers and errors as DBOS's own methods, on SQLite
and PostgreSQL."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from dbos import DBOS
from dbos._context import SetWorkflowID
from dbos._error import DBOSQueueDeduplicatedError
from dbos._sys_db import SystemDatabase
from durablekit import launched_system_database

from deskwork.runtime._dbos_prepared import prepare_step_statements

PATCHED = ("_update_workflow_outcome_in_transaction", "_execute_prepared")
VOLATILE = ("workflow_uuid", "created_at", "updated_at", "completed_at", "creator_xid")
"""Columns told apart by the call, not by the method (checked on their own)."""


@DBOS.step(name="deskwork.test.outcome.double")
def _double(x: int) -> int:
    return 2 * x


@DBOS.workflow(name="deskwork.test.outcome.ok")
def _ok(x: int) -> int:
    return _double(x) + 1


@DBOS.workflow(name="deskwork.test.outcome.fails")
def _fails(x: int) -> int:
    raise ValueError(f"boom {_double(x)}")


@pytest.fixture(params=["sqlite", "postgres"])
def sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from launched_system_database(request, tmp_path)


@contextmanager
def _dbos_own(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """DBOS's own end write and ``_execute_prepared`` in place of the patched ones."""
    prepare_step_statements()
    with monkeypatch.context() as patch:
        for name in PATCHED:
            patch.setattr(SystemDatabase, name, getattr(SystemDatabase, name).__wrapped__)
        yield


def _rows(sys_db: Any, workflow_id: str) -> dict[str, Any]:
    """The workflow's status row (its volatile columns checked and dropped), output row,
    input and step outputs."""
    tables = sys_db.tables
    with sys_db.engine.begin() as conn:
        status = dict(
            conn.execute(
                sa.select(tables.workflow_status).where(
                    tables.workflow_status.c.workflow_uuid == workflow_id
                )
            )
            .mappings()
            .one()
        )
        output = conn.execute(
            sa.select(tables.workflow_output.c.output, tables.workflow_output.c.error).where(
                tables.workflow_output.c.workflow_uuid == workflow_id
            )
        ).all()
        inputs = conn.execute(
            sa.select(tables.workflow_input.c.inputs).where(
                tables.workflow_input.c.workflow_uuid == workflow_id
            )
        ).all()
        steps = conn.execute(
            sa.select(
                tables.operation_outputs.c.function_id,
                tables.operation_outputs.c.function_name,
                tables.operation_outputs.c.output,
                tables.operation_outputs.c.error,
            )
            .where(tables.operation_outputs.c.workflow_uuid == workflow_id)
            .order_by(tables.operation_outputs.c.function_id)
        ).all()
    ended = status["status"] not in ("PENDING", "ENQUEUED")
    assert status["updated_at"] >= status["created_at"] > 0
    assert (status["completed_at"] is not None) == ended
    if ended:
        assert status["completed_at"] == status["updated_at"]
    return {
        "status": {k: v for k, v in status.items() if k not in VOLATILE},
        "output": [tuple(row) for row in output],
        "inputs": [tuple(row) for row in inputs],
        "steps": [tuple(row) for row in steps],
    }


def test_dbos_keeps_the_shape_the_patch_relies_on() -> None:
    prepare_step_statements()
    shapes = {
        "_update_workflow_outcome_in_transaction": [
            "self",
            "workflow_id",
            "status",
            "output",
            "error",
            "owner_xid",
        ],
        "_execute_prepared": ["self", "conn", "name", "values", "build", "insert_columns"],
    }
    for name, parameters in shapes.items():
        patched = getattr(SystemDatabase, name)
        assert getattr(patched, "deskwork", False), f"{name} is not patched"
        assert list(inspect.signature(patched.__wrapped__).parameters) == parameters, name
    assert callable(SystemDatabase._outcome_in_one_statement)


def test_the_patch_builds_each_statement_once(sys_db: Any) -> None:
    """A workflow's start builds its statements once per system database and set of
    columns (DBOS does on PostgreSQL; on SQLite it built them per call)."""
    prepare_step_statements()
    assert all(getattr(getattr(SystemDatabase, name), "deskwork", False) for name in PATCHED)
    builds: list[str] = []

    def build() -> Any:
        builds.append("built")
        return sa.select(sa.literal(1))

    with sys_db.engine.begin() as conn:
        for _ in range(3):
            assert sys_db._execute_prepared(conn, "deskwork.test", {}, build).scalar() == 1
    assert builds == ["built"]


def _pending(sys_db: Any, owner: str) -> str:
    """A finished workflow set back to PENDING, owned by ``owner`` (as a running one is)."""
    workflow_id = f"outcome-{uuid.uuid4().hex[:8]}"
    with SetWorkflowID(workflow_id):
        _ok(1)
    status, output = sys_db.tables.workflow_status, sys_db.tables.workflow_output
    with sys_db.engine.begin() as conn:
        conn.execute(
            status.update()
            .where(status.c.workflow_uuid == workflow_id)
            .values(status="PENDING", owner_xid=owner, completed_at=None, deduplication_id="d")
        )
        conn.execute(output.delete().where(output.c.workflow_uuid == workflow_id))
    return workflow_id


def _end_all_ways(sys_db: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """What the end write answers, and the rows it leaves: a success by the owner, an
    error by the owner, one written again, one by another executor (the workflow taken
    over), one without an owner to check, one of a cancelled workflow, an unknown one."""
    end = sys_db._update_workflow_outcome_in_transaction
    ok, failed, taken, unchecked, cancelled = (_pending(sys_db, "me") for _ in range(5))
    table = sys_db.tables.workflow_status
    with sys_db.engine.begin() as conn:  # as DBOS's cancel leaves a running workflow
        conn.execute(
            table.update()
            .where(table.c.workflow_uuid == cancelled)
            .values(status="CANCELLED", completed_at=table.c.updated_at)
        )
    answers = [
        end(ok, "SUCCESS", output="out", error=None, owner_xid="me"),
        end(failed, "ERROR", output=None, error="err", owner_xid="me"),
        end(ok, "ERROR", output=None, error="again", owner_xid="me"),
        end(taken, "SUCCESS", output="stolen", error=None, owner_xid="someone-else"),
        end(unchecked, "SUCCESS", output="plain", error=None, owner_xid=None),
        end(cancelled, "SUCCESS", output="late", error=None, owner_xid="me"),
        end("no-such-workflow", "SUCCESS", output="x", error=None, owner_xid="me"),
    ]
    rows = [_rows(sys_db, w) for w in (ok, failed, taken, unchecked, cancelled)]
    return answers, rows


def test_a_workflows_end_writes_what_dbos_writes(
    sys_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_step_statements()
    fast = _end_all_ways(sys_db)
    with _dbos_own(monkeypatch):
        own = _end_all_ways(sys_db)
    assert fast == own
    answers, rows = fast
    assert answers == [True, True, False, False, True, False, False]
    assert [r["output"] for r in rows] == [
        [("out", None)],
        [(None, "err")],
        [],
        [("plain", None)],
        [],
    ]
    assert [r["status"]["status"] for r in rows] == [
        "SUCCESS",
        "ERROR",
        "PENDING",
        "SUCCESS",
        "CANCELLED",
    ]
    ended = rows[0]["status"]
    assert ended["owner_xid"] is None and ended["deduplication_id"] is None
    assert rows[2]["status"]["owner_xid"] == "me"  # left to the executor that owns it


def _run_workflows(sys_db: Any, mode: str) -> list[dict[str, Any]]:
    """A workflow that succeeds and one that fails, run through DBOS (start, step, end)."""
    ids = [f"{mode}-ok-{uuid.uuid4().hex[:6]}", f"{mode}-fails-{uuid.uuid4().hex[:6]}"]
    with SetWorkflowID(ids[0]):
        assert _ok(3) == 7
    with SetWorkflowID(ids[1]), pytest.raises(ValueError, match="boom 8"):
        _fails(4)
    return [_rows(sys_db, w) for w in ids]


def test_workflows_run_end_to_end_leave_the_rows_dbos_leaves(
    sys_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_step_statements()
    fast = _run_workflows(sys_db, "fast")
    with _dbos_own(monkeypatch):
        own = _run_workflows(sys_db, "own")
    assert fast == own
    ok, failed = fast
    assert ok["status"]["status"] == "SUCCESS" and failed["status"]["status"] == "ERROR"
    assert ok["status"]["recovery_attempts"] == 1 and ok["output"][0][1] is None
    assert failed["output"][0][0] is None and failed["output"][0][1]
    assert len(ok["steps"]) == len(failed["steps"]) == 1


def _started_status() -> dict[str, Any]:
    """The status DBOS hands ``init_workflow`` when a workflow starts (captured)."""
    seen: list[dict[str, Any]] = []
    original = SystemDatabase.init_workflow

    def capture(self: Any, status: Any, **kwargs: Any) -> Any:
        seen.append(dict(status))
        return original(self, status, **kwargs)

    SystemDatabase.init_workflow = capture  # type: ignore[method-assign]
    try:
        with SetWorkflowID(f"outcome-{uuid.uuid4().hex[:8]}"):
            _ok(1)
    finally:
        SystemDatabase.init_workflow = original  # type: ignore[method-assign]
    return seen[0]


def _start_all_ways(sys_db: Any, base: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """What ``init_workflow`` answers and stores: a direct start, the same again by another
    caller, an enqueued start with a deduplication id, another with the same id (DBOS's
    deduplication error), and one with no creator token."""
    tag = uuid.uuid4().hex[:8]
    direct = {**base, "workflow_uuid": f"direct-{tag}", "inputs": "in-1"}
    queued = {
        **base,
        "status": "ENQUEUED",
        "queue_name": f"q-{tag}",
        "deduplication_id": "dedup",
        "priority": 3,
        "queue_partition_key": "part",
        "executor_id": "ex",
        "workflow_uuid": f"queued-{tag}",
    }
    plain = {**base, "workflow_uuid": f"plain-{tag}"}

    def start(status: dict[str, Any], creator: str | None) -> Any:
        try:
            return sys_db.init_workflow(dict(status), creator_xid=creator)
        except BaseException as exc:  # some DBOS errors are BaseExceptions
            return type(exc)

    answers = [
        start(direct, "c1"),
        start({**direct, "inputs": "in-2"}, "c2"),
        start(queued, "c3"),
        start({**queued, "workflow_uuid": f"dup-{tag}"}, "c4"),
        start(plain, None),
    ]
    rows = [_rows(sys_db, s["workflow_uuid"]) for s in (direct, queued, plain)]
    for row in rows:  # the queue name carries this call's tag
        row["status"]["queue_name"] = row["status"]["queue_name"] and "q"
    return answers, rows


def test_a_workflows_start_writes_what_dbos_writes(
    sys_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepare_step_statements()
    base = _started_status()
    fast = _start_all_ways(sys_db, base)
    with _dbos_own(monkeypatch):
        own = _start_all_ways(sys_db, base)
    assert fast == own
    answers, rows = fast
    assert answers[:4] == [
        ("PENDING", True),
        ("PENDING", False),
        ("ENQUEUED", True),
        DBOSQueueDeduplicatedError,
    ]
    direct, queued, _ = rows
    assert direct["inputs"] == [("in-1",)] and direct["status"]["recovery_attempts"] == 1
    assert queued["status"]["recovery_attempts"] == 0 and queued["status"]["owner_xid"] is None
    assert (queued["status"]["deduplication_id"], queued["status"]["priority"]) == ("dedup", 3)
    assert queued["status"]["queue_partition_key"] == "part"


def test_a_statement_sent_as_compiled_sql_keeps_what_sqlalchemy_adds(sys_db: Any) -> None:
    """A statement sent as its SQL compiled once (SQLite) gets its types' bind processing
    and its constants, and one whose defaults are computed in Python (which only
    SQLAlchemy's execution runs) is executed by SQLAlchemy; a caller's ORM session, as
    ``init_workflow_with_connection`` takes it, starts a workflow as DBOS's own does."""
    from sqlalchemy.orm import Session

    from deskwork.runtime._dbos_prepared import _execute

    table = sa.Table(
        f"deskwork_t_{uuid.uuid4().hex[:6]}",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("flag", sa.Boolean),
        sa.Column("data", sa.JSON),
        sa.Column("made", sa.Text, default=lambda: "by python"),
    )
    with sys_db.engine.begin() as conn:
        table.create(conn)
        insert = table.insert()
        _execute(
            sys_db,
            conn,
            insert,
            {"id": 1, "flag": True, "data": {"a": [1]}},
            ("id", "flag", "data"),
        )
        query = sa.select(table.c.flag, table.c.data, table.c.made).where(table.c.id == 1)
        assert conn.execute(query).one() == (True, {"a": [1]}, "by python")
        table.drop(conn)
    status = {**_started_status(), "workflow_uuid": f"session-{uuid.uuid4().hex[:8]}"}
    with Session(sys_db.engine) as session, session.begin():
        assert sys_db.init_workflow_with_connection(dict(status), session, creator_xid="c") == (
            "PENDING",
            True,
        )
    assert _rows(sys_db, status["workflow_uuid"])["inputs"] == [(status["inputs"],)]


@pytest.mark.parametrize("sys_db", ["sqlite"], indirect=True)
def test_an_autocommit_read_leaves_dbos_sqlite_connections_as_dbos_made_them(
    sys_db: Any,
) -> None:
    """The SQLite connections a deskwork read in autocommit used (a waiter's status poll)
    go back to the pool beginning ``IMMEDIATE`` transactions before a write, as DBOS opens
    them; a statement in the block is committed by itself."""
    from deskwork.runtime._dbos_prepared import autocommit, workflow_state

    def levels() -> set[Any]:
        held = [sys_db.engine.raw_connection() for _ in range(4)]
        try:
            return {c.driver_connection.isolation_level for c in held}
        finally:
            for c in held:
                c.close()

    workflow_id = _pending(sys_db, "me")
    for _ in range(4):
        assert workflow_state(workflow_id) == "PENDING"
    table = sys_db.tables.workflow_status
    with autocommit(sys_db) as conn:
        update = table.update().where(table.c.workflow_uuid == workflow_id)
        conn.execute(update.values(executor_id="autocommitted"))
    assert levels() == {"IMMEDIATE"}
    with sys_db.engine.connect() as conn:
        query = sa.select(table.c.executor_id).where(table.c.workflow_uuid == workflow_id)
        assert conn.execute(query).scalar() == "autocommitted"
