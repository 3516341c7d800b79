"""A tool's own TimeoutError (a socket's) is its failure, reported as raised, not as the
tool's timeout; and a run cancelled while an async tool with a timeout runs lets the tool's
``finally`` finish before the call returns."""

from __future__ import annotations

import asyncio

import pytest

from deskwork.core.tool_call import ToolCall
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool


@pytest.mark.parametrize("timeout", [None, 5.0])
async def test_a_timeout_error_the_tool_raises_is_its_own_failure(timeout: float | None) -> None:
    @tool(timeout=timeout)
    async def fetch() -> str:
        raise TimeoutError("socket read timed out")

    result = await aexecute_tool(fetch, ToolCall(id="c", name="fetch", arguments={}))
    assert not result.timed_out
    assert result.error is not None and "socket read timed out" in result.error
    assert "None" not in result.error


async def test_the_tool_timeout_itself_still_reads_as_one() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    result = await aexecute_tool(slow, ToolCall(id="c", name="slow", arguments={}))
    assert result.timed_out and result.error == "tool 'slow' timed out after 0.05s"


async def test_a_cancelled_call_lets_the_tool_clean_up_first() -> None:
    state = {"cleaned": False}

    @tool(timeout=30)
    async def slow() -> str:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0.2)
            state["cleaned"] = True
        return "never"

    call = asyncio.ensure_future(aexecute_tool(slow, ToolCall(id="c", name="slow", arguments={})))
    await asyncio.sleep(0.1)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert state["cleaned"]
