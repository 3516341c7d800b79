"""The two paths of ``deskwork.tools.execution`` that surviving mutants showed were only
guarded by slow suites: the durable step hook (a durable run hands the whole call to it)
and ``isolation="process"`` (a sync tool run in its own process, killed on a timeout)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import pytest

from deskwork import ToolCall, ToolResult
from deskwork._sync import run_sync
from deskwork.tools import Tool, tool
from deskwork.tools._pool import ToolThreadPool
from deskwork.tools._step_hook import tool_step_hook
from deskwork.tools.execution import aexecute_tool

pytestmark = pytest.mark.reliability

Run = Callable[[], Awaitable[ToolResult]]


@tool(isolation="process")
def where(tag: str) -> dict[str, object]:
    """Says which process ran it, with its argument."""
    return {"tag": tag, "pid": os.getpid()}


@tool(timeout=30)
async def wait_long() -> str:
    """Await for a long time."""
    await asyncio.sleep(30)
    return "never"


@tool()
def thread_name() -> str:
    """Says which thread ran it."""
    return threading.current_thread().name


@pytest.fixture
def steps() -> Iterator[list[tuple[str, str]]]:
    """A durable-style hook that records each step it is given, then runs it."""
    seen: list[tuple[str, str]] = []

    async def hook(step_tool: Tool, call: ToolCall, run: Run) -> ToolResult:
        seen.append((step_tool.name, call.id))
        return await run()

    token = tool_step_hook.set(hook)
    yield seen
    tool_step_hook.reset(token)


async def test_a_durable_run_hands_the_whole_call_to_its_step_hook() -> None:
    async def checkpointed(step_tool: Tool, call: ToolCall, run: Run) -> ToolResult:
        return ToolResult(content=f"recorded {step_tool.name} {call.id}")  # a replayed step

    token = tool_step_hook.set(checkpointed)
    try:
        result = await aexecute_tool(thread_name, ToolCall(id="c3", name="thread_name"))
    finally:
        tool_step_hook.reset(token)
    assert result.content == "recorded thread_name c3"  # the tool did not run again


async def test_a_durable_step_runs_the_tool_with_its_pool(steps: list[tuple[str, str]]) -> None:
    pool = ToolThreadPool(1, name="desk-pool")
    try:
        result = await aexecute_tool(thread_name, ToolCall(id="c1", name="thread_name"), pool=pool)
    finally:
        pool.shutdown()
    assert result.content is not None and result.content.startswith("desk-pool-")
    assert steps == [("thread_name", "c1")]


async def test_a_durable_step_can_be_cancelled(steps: list[tuple[str, str]]) -> None:
    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, cancel.set)
    call = ToolCall(id="c2", name="wait_long")
    result = await asyncio.wait_for(aexecute_tool(wait_long, call, cancel_event=cancel), 10)
    assert (result.cancelled, result.error) == (True, "tool execution cancelled")
    assert steps == [("wait_long", "c2")]


async def test_a_process_tool_runs_in_another_process_with_its_arguments() -> None:
    call = ToolCall(id="c", name="where", arguments={"tag": "t1"})
    result = await asyncio.wait_for(aexecute_tool(where, call), 60)
    assert result.error is None and isinstance(result.data, dict)
    assert result.data["tag"] == "t1" and result.data["pid"] != os.getpid()


async def test_a_thread_tool_runs_in_this_process() -> None:
    result = await aexecute_tool(thread_name, ToolCall(id="c", name="thread_name"))
    assert result.content is not None and result.content.startswith("deskwork-tool")


LINGERING = threading.Event()


@tool()
def linger() -> str:
    """Blocks longer than the caller is willing to wait (60 s, or until the test is done)."""
    LINGERING.wait(60)
    return "late"


def test_a_sync_tool_with_a_cancel_event_can_be_cancelled_from_a_sync_api() -> None:
    """A sync API's loop may run a sync tool on its own thread, but not one that may be
    cancelled: the loop must stay free to see the cancel event."""

    async def call_and_cancel() -> ToolResult:
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, cancel.set)
        return await aexecute_tool(linger, ToolCall(id="c", name="linger"), cancel_event=cancel)

    started = time.monotonic()
    result = run_sync(call_and_cancel(), api="test")
    assert (result.cancelled, result.content) == (True, None)
    LINGERING.set()
    assert time.monotonic() - started < 20  # it did not wait for the tool's 60 s
