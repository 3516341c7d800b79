"""Faults inside one run: a hanging tool, raising hooks and handlers, malformed tool calls.

Each ends the way a production user relies on: the run finishes in a defined status within
a bounded time, the model sees a clear error as the tool's answer, and every event is stored.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, EventBus, ToolCall, ToolResult, Worker
from deskwork.core.event import Event
from deskwork.core.report import Report
from deskwork.store import SQLiteRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tools, fail, reply
from deskwork.tools import Tool, tool

pytestmark = pytest.mark.reliability


def _run(
    tmp_path: Path, tools: list[Tool], turns: list[Turn], bus: EventBus | None = None
) -> tuple[Report, ScriptedAdapter, SQLiteRunStore]:
    adapter = ScriptedAdapter(turns)
    store = SQLiteRunStore(tmp_path / "runs.db")
    desk = Desk(
        model="scripted",
        adapter=adapter,
        run_store=store,
        event_bus=bus,
        storage_dir=tmp_path / ".deskwork",
    )
    return desk.run(Worker(name="w", tools=tools), "go"), adapter, store


def _tool_answers(adapter: ScriptedAdapter) -> list[str]:
    """What the model was told each tool returned, in its last request."""
    messages = adapter.calls[-1]["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def _stored_types(store: SQLiteRunStore, report: Report) -> list[str]:
    stored = store.get_events(report.run_id)
    assert [e.event_id for e in stored] == [e.event_id for e in report.events]
    return [e.type for e in stored]


def test_a_hanging_sync_tool_times_out_and_the_run_goes_on(tmp_path: Path) -> None:
    release = threading.Event()

    @tool(timeout=0.3)
    def hang() -> str:
        """Wait forever (until the test ends)."""
        release.wait(120)
        return "never seen"

    started = time.perf_counter()
    try:
        report, adapter, store = _run(tmp_path, [hang], [call_tools(("hang", {})), reply("ok")])
    finally:
        release.set()
    assert time.perf_counter() - started < 60  # not the tool's 120 s
    assert (report.status, report.content) == ("completed", "ok")
    assert report.tool_calls[0].result is not None and report.tool_calls[0].result.timed_out
    assert "timed out" in _tool_answers(adapter)[0].lower()
    assert "tool.failed" in _stored_types(store, report)


def test_a_hanging_async_tool_is_cancelled_at_its_timeout(tmp_path: Path) -> None:
    cancelled = threading.Event()

    @tool(timeout=0.2)
    async def stall() -> str:
        """Await forever."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never seen"

    report, adapter, _ = _run(tmp_path, [stall], [call_tools(("stall", {})), reply("ok")])
    assert report.status == "completed"
    assert cancelled.is_set()
    assert "timed out" in _tool_answers(adapter)[0].lower()


def test_raising_pre_and_post_hooks_become_the_tools_error(tmp_path: Path) -> None:
    ran: list[str] = []

    def deny(call: ToolCall) -> None:
        raise PermissionError("not today")

    def audit(call: ToolCall, result: ToolResult) -> None:
        raise RuntimeError("audit log is down")

    @tool(pre=(deny,))
    def guarded() -> str:
        """Never runs: its pre-hook refuses."""
        ran.append("guarded")
        return "x"

    @tool(post=(audit,))
    def audited() -> str:
        """Runs; its post-hook fails."""
        ran.append("audited")
        return "y"

    turns = [call_tools(("guarded", {}), ("audited", {})), reply("ok")]
    report, adapter, store = _run(tmp_path, [guarded, audited], turns)
    assert report.status == "completed"
    assert ran == ["audited"]  # a pre-hook that raises stops the call
    answers = _tool_answers(adapter)
    assert answers[0].startswith("Error: pre-hook") and "deny failed: not today" in answers[0]
    assert answers[1].startswith("Error: post-hook") and "audit failed: audit log" in answers[1]
    assert _stored_types(store, report).count("tool.failed") == 2


def test_raising_event_handlers_do_not_break_the_run_or_lose_events(tmp_path: Path) -> None:
    bus = EventBus()

    def broken(event: Event) -> None:
        raise ValueError("handler bug")

    async def broken_async(event: Event) -> None:
        raise ValueError("async handler bug")

    bus.subscribe("*", broken)
    bus.subscribe("tool.completed", broken_async)

    @tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    turns = [call_tools(("add", {"a": 2, "b": 3})), reply("5")]
    report, _, store = _run(tmp_path, [add], turns, bus=bus)
    assert (report.status, report.content) == ("completed", "5")
    types = _stored_types(store, report)
    assert types[0] == "run.started" and types[-1] == "run.completed"
    errors = bus.get_errors()
    assert len(errors) >= len(types)  # every event's handler failure is recorded, none raised
    assert any("async handler bug" in str(e.handler_error) for e in errors)


@pytest.mark.parametrize(
    "raw",
    ['{"a": 1, "b": ', "not json at all", "[1, 2]", '"a string"', "{'a': 1}", "\x00\ud800"],
)
def test_malformed_tool_call_json_is_answered_with_an_error(tmp_path: Path, raw: str) -> None:
    ran: list[Any] = []

    @tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append((a, b))
        return a + b

    turns = [call_tools(("add", raw)), reply("sorry")]
    report, adapter, store = _run(tmp_path, [add], turns)
    assert (report.status, report.content) == ("completed", "sorry")
    assert ran == []
    answer = _tool_answers(adapter)[0]
    assert answer.startswith("Error:") and "argument" in answer.lower()
    assert store.get_run(report.run_id) is not None


def test_an_unknown_tool_and_a_raising_tool_are_errors_not_crashes(tmp_path: Path) -> None:
    @tool()
    def explode() -> str:
        """Raise."""
        raise OSError("disk on fire")

    turns = [call_tools(("nope", {}), ("explode", {})), reply("handled")]
    report, adapter, _ = _run(tmp_path, [explode], turns)
    assert (report.status, report.content) == ("completed", "handled")
    unknown, exploded = _tool_answers(adapter)
    assert unknown.startswith("Error:") and "nope" in unknown
    assert "disk on fire" in exploded


def test_a_model_that_raises_ends_the_run_failed_and_stored(tmp_path: Path) -> None:
    report, _, store = _run(tmp_path, [], [fail(ConnectionError("provider went away"))])
    assert report.status == "failed"
    assert any("provider went away" in error for error in report.errors)
    record = store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
    assert _stored_types(store, report)[-1] == "run.failed"
