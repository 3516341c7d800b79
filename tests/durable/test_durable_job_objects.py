"""A durable run started in this process runs the job as given, not its stored form: a
``TypeAdapter`` response schema (stored as a description, not an import path) was dropped, so
the run completed with the model's raw text and ``data=None``; and a resume in this process
continues with the same job."""

from __future__ import annotations

from pathlib import Path

from pydantic import TypeAdapter

from deskwork import Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, structured
from deskwork.tools import tool


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy (asks first)."""
    return f"deployed {target}"


def test_a_type_adapter_schema_shapes_the_durable_run(tmp_path: Path) -> None:
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([structured([1, 2, 3])]),
        storage_dir=tmp_path,
        durable=True,
    )
    try:
        job = Job(input="three numbers", response_schema=TypeAdapter(list[int]))
        report = desk.run(Worker(name="counter"), job)
    finally:
        desk.close()
    assert (report.status, report.data) == ("completed", [1, 2, 3])


def test_a_durable_run_resumed_in_its_process_keeps_the_schema(tmp_path: Path) -> None:
    turns = [call_tool("deploy", target="prod"), "deployed it", structured(["prod"])]
    desk = Desk(model="m", adapter=ScriptedAdapter(turns), storage_dir=tmp_path, durable=True)
    try:
        job = Job(input="deploy", response_schema=TypeAdapter(list[str]))
        paused = desk.run(Worker(name="ops", tools=[deploy]), job)
        assert paused.status == "paused"
        report = desk.resume(paused, True)
    finally:
        desk.close()
    assert (report.status, report.data) == ("completed", ["prod"])
