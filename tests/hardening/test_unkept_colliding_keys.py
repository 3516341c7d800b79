"""Two keys of one dict that are one JSON key (``1`` and ``"1"``) lose no value silently and
no run's work: a tool's returned ToolResult with such data fails that call (as a returned
dict does), and a runner's final data with such keys leaves the run completed with its
content, its stored ``output_json`` null and a warning on ``run.completed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Job, ToolResult, Worker
from deskwork.core.report import Report
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

COLLIDING = {1: "from the cache", "1": "from the database"}


def _desk(store: str, tmp_path: Path, *turns: Any) -> Desk:
    adapter = ScriptedAdapter(turns)
    if store == "memory":
        return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    return Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_tool_result_with_colliding_data_keys_fails_the_call(store: str, tmp_path: Path) -> None:
    @tool
    def scores() -> ToolResult:
        return ToolResult(content="two scores", data={"rows": [dict(COLLIDING)]})

    desk = _desk(store, tmp_path, call_tool("scores"), reply("could not read the scores"))
    report = desk.run(Worker(name="w", tools=[scores]), Job(input="scores?"))

    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "ToolResultKeysCollide"
    assert "the keys 1 and '1'" in (result.error or "") and result.data is None
    events = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert "tool.failed" in events and events[-1] == "run.completed"
    desk.close()


class _Tally:
    """A custom runner whose final data has two keys that are one JSON key."""

    name = "tally"
    runner_type = "custom"

    async def arun(self, config: Any, job: Job) -> tuple[Report, None]:
        data = {"counts": dict(COLLIDING)}
        return Report(run_id=config.run_id, status="completed", content="tallied", data=data), None

    async def aresume(self, *args: Any) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_runner_data_with_colliding_keys_keeps_the_run_and_its_content(
    store: str, tmp_path: Path
) -> None:
    desk = _desk(store, tmp_path)
    report = desk.run(_Tally(), Job(input="tally"))  # type: ignore[arg-type]

    assert report.status == "completed", report.errors
    assert report.content == "tallied" and report.data == {"counts": COLLIDING}
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed"
    assert record.output == "tallied" and record.output_json is None
    end = desk.run_store.get_events(report.run_id)[-1]
    assert end.type == "run.completed"
    assert "the keys 1 and '1'" in end.payload["warnings"][0]
    desk.close()


def test_a_job_whose_input_or_metadata_has_colliding_keys_is_refused_when_made() -> None:
    with pytest.raises(ValidationError, match="the keys 1 and '1'"):
        Job(input={"rows": [dict(COLLIDING)]})
    with pytest.raises(ValidationError, match="the keys 1 and '1'"):
        Job(input="x", metadata={"labels": dict(COLLIDING)})
