"""The documented size limit (``MAX_STORED_CHARS`` per text) holds where data enters, not
only in the stores (issue 12 item 5): a job whose input or messages are too large is refused
when it is made, and a tool result that is too large becomes a failed tool call the model is
told about, recorded as a ``tool.failed`` event, instead of breaking the run when it is saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Job, Message, ToolResult, Worker
from deskwork.store._blobs import MAX_STORED_CHARS
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HUGE = "x" * (MAX_STORED_CHARS + 1)
TOO_LARGE = "larger than a run store keeps"


@pytest.mark.parametrize(
    "fields",
    [
        {"input": HUGE},
        {"input": {"document": [HUGE]}},
        {"input": "go", "initial_messages": [Message(role="user", content=HUGE)]},
        {"initial_messages": [Message(role="user", content=[{"type": "text", "text": HUGE}])]},
    ],
    ids=["text", "nested", "message", "content-part"],
)
def test_a_job_too_large_to_store_is_refused_when_made(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match=TOO_LARGE) as caught:
        Job(**fields)
    assert "pass large data by reference" in str(caught.value)


def test_a_job_at_the_limit_is_accepted() -> None:
    largest = "y" * MAX_STORED_CHARS
    assert Job(input=largest).input is largest
    assert Job(input="go", initial_messages=[Message(role="user", content=largest)])


@tool
def dump_all() -> str:
    """Returns more text than a run may keep."""
    return HUGE


@tool
def dump_data() -> dict[str, Any]:
    """Returns structured data holding a text larger than a run may keep."""
    return {"rows": [HUGE]}


@tool
def dump_beside() -> ToolResult:
    """A short text for the model, with data beside it that no run may keep."""
    return ToolResult(content="3 rows", data={"rows": [HUGE]})


TOOLS = [dump_all, dump_data, dump_beside]


@pytest.mark.parametrize("tool_name", [t.name for t in TOOLS])
def test_a_tool_result_too_large_to_store_fails_that_call(tmp_path: Path, tool_name: str) -> None:
    adapter = ScriptedAdapter([call_tool(tool_name), reply("summarised instead")])
    desk = Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)
    try:
        report = desk.run(Worker(name="w", tools=TOOLS), Job(input="go"))
        assert report.status == "completed", report.errors
        assert report.content == "summarised instead"
        result = report.tool_calls[0].result
        assert result is not None and result.error is not None and TOO_LARGE in result.error
        assert result.error.startswith(f"tool {tool_name!r} returned a result ")
        assert (result.exception_type, result.content, result.data) == (
            "ToolResultTooLarge",
            None,
            None,
        )
        assert report.metrics["tool_errors"] == 1
        told = adapter.calls[1]["messages"][-1]
        assert told["role"] == "tool" and told["content"] == f"Error: {result.error}"
        failed = [e for e in desk.run_store.get_events(report.run_id) if e.type == "tool.failed"]
        assert [e.payload["exception_type"] for e in failed] == ["ToolResultTooLarge"]
        record = desk.run_store.get_run(report.run_id)
        assert record is not None and record.status == "completed"
    finally:
        desk.close()
