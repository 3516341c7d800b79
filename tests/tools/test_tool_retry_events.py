"""Each failed attempt of a tool with ``retries`` that is tried again leaves a ``tool.retry``
event: a call that failed twice and then worked is no longer indistinguishable from one that
worked at once."""

from __future__ import annotations

from typing import Any

from deskwork import Desk, Job, Worker
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import aexecute_tool, tool


def _run(worker: Worker) -> tuple[Any, Desk]:
    adapter = ScriptedAdapter([call_tool(worker.tools[0].name), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    return desk.run(worker, Job(input="go")), desk


def _flaky(failures: int, retries: int) -> Any:
    attempts = {"n": 0}

    @tool(retries=retries, retry_delay=0.0)
    def fetch() -> str:
        attempts["n"] += 1
        if attempts["n"] <= failures:
            raise ConnectionError(f"reset #{attempts['n']} (api_key=sk-live-1234567890abcdef)")
        return "page"

    return fetch


def test_two_failed_attempts_then_success_leave_two_retry_events_stored() -> None:
    report, desk = _run(Worker(name="w", tools=[_flaky(failures=2, retries=3)]))

    assert report.status == "completed", report.errors
    stored = desk.run_store.get_events(report.run_id)
    tool_events = [e for e in stored if e.type.startswith("tool.")]
    assert [e.type for e in tool_events] == [
        "tool.started",
        "tool.retry",
        "tool.retry",
        "tool.completed",
    ]
    retries = [e.payload for e in tool_events if e.type == "tool.retry"]
    assert [p["attempt"] for p in retries] == [1, 2]
    call_id = report.tool_calls[0].id
    for number, payload in enumerate(retries, start=1):
        assert payload["tool_call_id"] == call_id and payload["retries"] == 3
        assert payload["error_type"] == "ConnectionError"
        assert f"reset #{number}" in payload["error_message"]
        assert "sk-live" not in payload["error_message"]  # redacted
        assert payload["wait_seconds"] == 0.0 and payload["timed_out"] is False
    assert all(e.source == "fetch" for e in tool_events)


def test_the_last_failed_attempt_is_the_failed_call_not_a_retry() -> None:
    report, _ = _run(Worker(name="w", tools=[_flaky(failures=5, retries=1)]))

    types = [e.type for e in report.events if e.type.startswith("tool.")]
    assert types == ["tool.started", "tool.retry", "tool.failed"]


def test_a_call_that_works_at_once_emits_no_retry_event() -> None:
    report, _ = _run(Worker(name="w", tools=[_flaky(failures=0, retries=3)]))

    assert "tool.retry" not in [e.type for e in report.events]


async def test_aexecute_tool_tells_its_listener_of_each_retried_attempt() -> None:
    heard: list[tuple[int, float, str | None]] = []
    result = await aexecute_tool(
        _flaky(failures=2, retries=2),
        ToolCall(id="c1", name="fetch"),
        on_retry=lambda attempt, wait, failed: heard.append((attempt, wait, failed.error)),
    )
    assert result == ToolResult(content="page")
    assert [(attempt, wait) for attempt, wait, _ in heard] == [(1, 0.0), (2, 0.0)]
    assert all("ConnectionError: reset" in (error or "") for _, _, error in heard)
