"""A tool or hook that awaits something another cancelled fails its call, not the run; a run
that is cancelled still stops."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deskwork import Desk, Job, ToolCall, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import aexecute_tool, tool


async def _cancelled_elsewhere() -> str:
    """Await a shared request that another consumer cancelled."""
    shared: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    shared.cancel()
    return await shared


@tool
async def fetch(url: str) -> str:
    """Fetch through a shared request."""
    return await _cancelled_elsewhere()


async def _audit(call: ToolCall) -> None:
    await _cancelled_elsewhere()


@tool(pre=(_audit,), timeout=5)
def audited(url: str) -> str:
    """A tool whose pre-hook awaits the shared request."""
    return "fetched"


async def test_the_run_goes_on_when_a_tool_awaited_something_cancelled(tmp_path: Path) -> None:
    desk = Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([call_tool("fetch", url="u"), reply("the fetch failed")]),
        storage_dir=tmp_path,
    )
    report = await desk.arun(Worker(name="w", tools=[fetch]), Job(input="fetch u"))

    assert report.status == "completed" and report.content == "the fetch failed"
    result = report.tool_calls[0].result
    assert result is not None and not result.cancelled
    assert result.error == "CancelledError: something it awaited was cancelled"
    assert "tool.failed" in [e.type for e in desk.run_store.get_events(report.run_id)]
    desk.close()


async def test_a_hook_that_awaited_something_cancelled_fails_the_call() -> None:
    result = await aexecute_tool(audited, ToolCall(id="c1", name="audited", arguments={"url": "u"}))

    assert result.error is not None and not result.cancelled
    assert "pre-hook _audit failed: CancelledError: something it awaited" in result.error


async def test_cancelling_the_caller_still_cancels_the_call() -> None:
    @tool
    async def slow(url: str) -> str:
        await asyncio.sleep(30)
        return "late"

    task = asyncio.ensure_future(
        aexecute_tool(slow, ToolCall(id="c1", name="slow", arguments={"url": "u"}))
    )
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
