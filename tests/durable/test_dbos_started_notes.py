"""The note of the workflows a start in this process created (``_dbos_prepared._started``,
which lets a deskwork run skip reading its own record: 8adaa34) keeps no entry for a
workflow of the application's own: only a deskwork run's execution asks for its note (and
drops it), so any other workflow's stayed for the life of the process."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS
from dbos._context import SetWorkflowID
from durablekit import launched_system_database

from deskwork.runtime import _dbos_prepared, _durable


@DBOS.workflow(name="deskwork.test.started_notes")
def _own_workflow() -> str:
    return "mine"


@pytest.fixture(params=["sqlite"])
def sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from launched_system_database(request, tmp_path)


def test_an_application_workflow_leaves_no_note(sys_db: Any) -> None:
    ids = [f"own-{uuid.uuid4().hex[:8]}" for _ in range(5)]
    for workflow_id in ids:
        with SetWorkflowID(workflow_id):
            assert _own_workflow() == "mine"
    assert not set(ids) & set(_dbos_prepared._started)


def test_the_noted_workflow_is_the_deskwork_run() -> None:
    assert _dbos_prepared.RUN_WORKFLOW == _durable.WORKFLOW_NAME
