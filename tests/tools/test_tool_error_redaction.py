"""A secret in the text of a tool's (or hook's) exception reaches neither the model, nor the
report, nor an ``on_event`` listener; a tool's own successful return value is kept as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskwork import Desk, Event, Job, ToolCall, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import Tool, ToolResult, tool

KEY = "sk-live-abcdef0123456789"


def _pre(call: ToolCall) -> None:
    raise PermissionError(f"pre check failed with {KEY}")


def _post(call: ToolCall, result: ToolResult) -> None:
    raise ValueError(f"post check failed with {KEY}")


@tool(name="fetch")
def raising(url: str) -> str:
    raise RuntimeError(f"auth failed for {KEY}")


@tool(name="fetch", pre=(_pre,))
def pre_hooked(url: str) -> str:
    return "fetched"


@tool(name="fetch", post=(_post,))
def post_hooked(url: str) -> str:
    return "fetched"


@tool(name="fetch")
def returning(url: str) -> str:
    return f"your key is {KEY}"


@pytest.mark.parametrize("fetch", [raising, pre_hooked, post_hooked], ids=["tool", "pre", "post"])
def test_a_secret_in_a_failure_text_is_redacted_for_model_report_and_events(
    tmp_path: Path, fetch: Tool
) -> None:
    adapter = ScriptedAdapter([call_tool("fetch", url="x"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)
    events: list[Event] = []
    report = desk.run(Worker(name="w", tools=[fetch]), Job(input="go"), on_event=events.append)
    assert report.status == "completed"
    seen_by_model = adapter.calls[1]["messages"][-1]
    assert seen_by_model["role"] == "tool"
    assert seen_by_model["content"].startswith("Error:")
    assert "<redacted>" in seen_by_model["content"]
    assert KEY not in json.dumps(adapter.calls, default=str)
    assert KEY not in report.model_dump_json()
    failed = [e for e in events if e.type == "tool.failed"]
    assert failed and "<redacted>" in failed[0].payload["error"]
    assert KEY not in json.dumps([e.model_dump(mode="json") for e in events])


def test_a_tools_successful_return_value_reaches_the_model_unchanged(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("fetch", url="x"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)
    desk.run(Worker(name="w", tools=[returning]), Job(input="go"))
    assert adapter.calls[1]["messages"][-1]["content"] == f"your key is {KEY}"
