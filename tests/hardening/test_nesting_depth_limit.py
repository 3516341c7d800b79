"""Data nested deeper than a run store keeps (``MAX_STORED_DEPTH``, 100 levels) is refused
early: a job's input when the Job is made, a tool result's data by failing that call. It used
to fail late: a SQLite store could not save the run's end (255 levels), the in-memory store
kept a state it could not read back (200), and 900 levels raised RecursionError out of
``desk.run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.store._blobs import MAX_STORED_DEPTH
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def nest(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"child": value}
    return value


def _desk(store: str, tmp_path: Path, *turns: Any) -> Desk:
    adapter = ScriptedAdapter(turns)
    if store == "memory":
        return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    return Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)


@pytest.mark.parametrize("levels", [MAX_STORED_DEPTH + 1, 300, 900])
def test_a_job_input_nested_too_deep_is_refused_when_the_job_is_made(levels: int) -> None:
    with pytest.raises(ValidationError, match="nested more than 100 levels deep"):
        Job(input=nest(levels))


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_an_input_as_deep_as_the_limit_runs_and_is_stored(store: str, tmp_path: Path) -> None:
    desk = _desk(store, tmp_path, reply("ok"))
    report = desk.run(Worker(name="w"), Job(input=nest(MAX_STORED_DEPTH)))

    assert report.status == "completed", report.errors
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.state is not None
    assert record.state.job["input"] == nest(MAX_STORED_DEPTH)
    desk.close()


@pytest.mark.parametrize(("store", "levels"), [("memory", 200), ("sqlite", 300), ("sqlite", 900)])
def test_a_tool_result_nested_too_deep_fails_the_call_and_the_run_is_kept(
    store: str, levels: int, tmp_path: Path
) -> None:
    @tool
    def org_tree() -> Any:
        return nest(levels)

    desk = _desk(store, tmp_path, call_tool("org_tree"), reply("the tree is too deep"))
    report = desk.run(Worker(name="w", tools=[org_tree]), Job(input="draw the tree"))

    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "ToolResultTooDeep"
    assert "nests" in (result.error or "") and result.data is None
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed" and record.state is not None
    events = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert "tool.failed" in events and events[-1] == "run.completed"
    desk.close()
