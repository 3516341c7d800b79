"""A job's metadata and a model's tool-call arguments nested deeper than a run store keeps
(``MAX_STORED_DEPTH``, 100 levels) are refused early: the metadata when the Job is made, the
arguments as an invalid call the model is told of, before the tool runs. Both used to fail the
run late, when a SQLite store saved its end (the tool had run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Job, Worker
from deskwork.adapters.base import parse_tool_call
from deskwork.store import InMemoryRunStore
from deskwork.store._blobs import MAX_STORED_DEPTH
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def nest(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"child": value}
    return value


@pytest.mark.parametrize("levels", [MAX_STORED_DEPTH + 1, 300])
def test_job_metadata_nested_too_deep_is_refused_when_the_job_is_made(levels: int) -> None:
    with pytest.raises(ValidationError, match="nested more than 100 levels deep"):
        Job(input="x", metadata={"trace": nest(levels)})


@pytest.mark.parametrize(("store", "levels"), [("sqlite", 150), ("sqlite", 300), ("memory", 300)])
def test_call_arguments_nested_too_deep_fail_the_call_before_the_tool_runs(
    store: str, levels: int, tmp_path: Path
) -> None:
    ran: list[object] = []

    @tool
    def put(doc: dict[str, Any]) -> str:
        ran.append(doc)
        return "stored"

    adapter = ScriptedAdapter([call_tool("put", doc=nest(levels)), reply("could not store it")])
    run_store = InMemoryRunStore() if store == "memory" else None
    desk = Desk(model="scripted/m", adapter=adapter, run_store=run_store, storage_dir=tmp_path)
    report = desk.run(Worker(name="w", tools=[put]), Job(input="store the doc"))

    assert report.status == "completed", report.errors
    assert ran == []
    call = report.tool_calls[0]
    assert call.arguments == {} and call.result is not None
    assert call.result.exception_type == "ToolValidationError"
    assert "nest more than 100 levels deep" in (call.result.error or "")
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed" and record.state is not None
    desk.close()


def test_call_arguments_as_deep_as_the_limit_or_given_as_a_dict() -> None:
    ok = parse_tool_call("c1", "put", {"doc": nest(MAX_STORED_DEPTH - 1)})
    assert ok.error is None and ok.arguments == {"doc": nest(MAX_STORED_DEPTH - 1)}
    deep = parse_tool_call("c2", "put", {"doc": nest(MAX_STORED_DEPTH)})
    assert deep.arguments == {} and "nest more than 100" in (deep.error or "")
    endless = parse_tool_call("c3", "put", '{"doc": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert endless.arguments == {} and "nest more than 100" in (endless.error or "")
