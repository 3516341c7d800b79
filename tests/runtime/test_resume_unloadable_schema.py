"""A paused run whose job's response schema this process cannot load (a TypeAdapter, a class
defined in a function) is not resumed without it: the resume went on unvalidated and the run
"completed" with the model's raw text and ``data=None``. Now a new desk refuses the resume with
a ConfigurationError naming the schema, and the run stays paused (the desk that paused it can
still resume it); a flow refuses a paused step's such job the same way; and a durable submit
refuses such a job at once (a worker could not run it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

from deskwork import ConfigurationError, Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, structured
from deskwork.tools import tool
from deskwork.workflow import Flow, Step


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy (asks first)."""
    return f"deployed {target}"


def _local_schema() -> type[BaseModel]:
    class Deployed(BaseModel):
        target: str

    return Deployed


def _desk(tmp_path: Path, *turns: object) -> Desk:
    return Desk(model="m", adapter=ScriptedAdapter(list(turns)), storage_dir=tmp_path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "schema", [TypeAdapter(dict[str, str]), _local_schema()], ids=["type_adapter", "local_class"]
)
def test_a_new_desk_refuses_the_resume_and_the_run_stays_paused(
    tmp_path: Path, schema: object
) -> None:
    first = _desk(tmp_path, call_tool("deploy", target="prod"), "done", structured({"target": "p"}))
    worker = Worker(name="ops", tools=[deploy])
    paused = first.run(worker, Job(input="deploy", response_schema=schema))
    assert paused.status == "paused"

    other = _desk(tmp_path, "done", structured({"target": "p"}))
    other.register(worker)
    with pytest.raises(ConfigurationError, match=r"response_schema .* cannot be loaded"):
        other.resume(paused.run_id, True)
    assert other.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]
    other.close()

    report = first.resume(paused, True)  # the desk that paused it has the job itself
    assert (report.status, report.data is not None) == ("completed", True)
    first.close()


def test_a_durable_submit_refuses_a_schema_a_worker_cannot_load(tmp_path: Path) -> None:
    pytest.importorskip("dbos", reason="durable runs need the dbos extra")
    desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir=tmp_path, durable=True)
    try:
        job = Job(input="x", response_schema=TypeAdapter(list[int]))
        with pytest.raises(ConfigurationError, match="cannot be loaded"):
            desk.submit(Worker(name="w"), job, queue="q")
    finally:
        desk.close()


def test_a_flow_step_with_such_a_schema_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    schema = TypeAdapter(dict[str, str])
    worker = Worker(name="ops", tools=[deploy])

    def flow_of(desk: Desk) -> Flow:
        step = Step(worker, job_builder=lambda ctx: Job(input="deploy", response_schema=schema))
        return desk.flow([step], name="release")

    first = _desk(tmp_path, call_tool("deploy", target="prod"), "done", structured({"t": "p"}))
    flow = flow_of(first)
    paused = flow.run("go")
    assert paused.status == "paused"

    other = _desk(tmp_path)
    with pytest.raises(ConfigurationError, match=r"Step 'ops': the job's response_schema"):
        flow_of(other).resume(paused.run_id, True)
    assert other.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]
    other.close()

    report = flow.resume(paused, True)  # the flow that paused it has the step's job itself
    first.close()
    assert (report.status, report.data) == ("completed", {"t": "p"})
