"""A ToolResult whose data contains itself fails the call, not the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskwork import Desk, Job, ToolResult, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def test_a_tool_result_with_cyclic_data_fails_the_call_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    @tool
    def org_chart() -> ToolResult:
        boss: dict[str, Any] = {"name": "Ada", "reports": []}
        boss["reports"].append({"name": "Bob", "manager": boss})  # a back-reference
        return ToolResult(content="Ada manages Bob", data=boss)

    desk = Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([call_tool("org_chart"), reply("could not read the chart")]),
        storage_dir=tmp_path,
    )
    report = desk.run(Worker(name="hr", tools=[org_chart]), Job(input="who reports to Ada?"))

    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "ToolResultTooDeep"
    assert "contains itself" in (result.error or "")
    events = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert "tool.failed" in events and events[-1] == "run.completed"
    desk.close()
