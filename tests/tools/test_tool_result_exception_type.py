"""A tool's own failed ``ToolResult(original_exception=exc)`` is named by its exception."""

from __future__ import annotations

from deskwork import Desk, Job, ToolResult, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def test_a_failed_result_given_only_its_exception_reports_the_exception_type() -> None:
    @tool
    def lookup() -> ToolResult:
        try:
            raise KeyError("customer 42")
        except KeyError as exc:
            return ToolResult(error="no such customer", original_exception=exc)

    desk = Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([call_tool("lookup"), reply("sorry")]),
        run_store=InMemoryRunStore(),
    )
    report = desk.run(Worker(name="w", tools=[lookup]), Job(input="find 42"))

    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "KeyError"
    failed = [e for e in report.events if e.type == "tool.failed"]
    assert [e.payload["exception_type"] for e in failed] == ["KeyError"]


def test_an_exception_type_given_is_kept() -> None:
    result = ToolResult(error="x", exception_type="Quota", original_exception=ValueError())
    assert result.exception_type == "Quota"
    assert ToolResult(error="x").exception_type is None
