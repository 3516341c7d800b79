"""Tool failures go back to the model and the run goes on, but the report shows them."""

from __future__ import annotations

import asyncio
from typing import Any

from deskwork import Desk, Job, Worker, Workforce
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply, structured
from deskwork.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


@tool(timeout=0.05)
async def slow() -> str:
    """Never finishes in time."""
    await asyncio.sleep(5)
    return "late"


TOOLS = [add, explode, slow]


def _run(*turns: Turn) -> Any:
    adapter = ScriptedAdapter([*turns, reply("done anyway")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    return desk.run(Worker(name="w", tools=TOOLS), Job(input="go"))


def test_a_clean_run_reports_zero_tool_errors() -> None:
    report = _run(call_tool("add", a=1, b=2))
    assert report.status == "completed"
    assert report.metrics["tool_errors"] == 0
    assert not [e for e in report.events if e.type == "tool.failed"]


def test_a_run_that_limped_counts_each_kind_of_tool_failure() -> None:
    report = _run(
        call_tools(
            ("add", '{"a": 1, "b": '),  # malformed JSON
            ("add", {"a": "one", "b": 2}),  # invalid arguments
            ("nope", {}),  # unknown tool
            ("explode", {}),  # the tool raised
            ("slow", {}),  # timed out
        )
    )
    assert (report.status, report.content) == ("completed", "done anyway")  # it went on
    metrics = report.metrics
    assert metrics["tool_errors"] == 5
    assert metrics["tool_invalid_calls"] == 3
    assert metrics["tool_timeouts"] == 1
    failed = [e.payload for e in report.events if e.type == "tool.failed"]
    assert sorted(p["kind"] for p in failed) == [
        "error",
        "invalid_call",
        "invalid_call",
        "invalid_call",
        "timeout",
    ]
    by_id = {p["tool_call_id"]: p for p in failed}
    assert by_id["call_0"]["exception_type"] == "ToolValidationError"
    assert by_id["call_3"]["exception_type"] == "RuntimeError"


def test_workforce_reports_total_their_members_tool_errors() -> None:
    adapter = ScriptedAdapter(
        [structured({"worker": "w"}), call_tool("explode"), reply("done anyway")]
    )
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Workforce([Worker(name="w", tools=TOOLS)]), Job(input="go"))
    assert report.status == "completed"
    assert report.metrics["tool_errors"] == 1
