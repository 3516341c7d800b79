"""An async tool that swallows the cancellation of its timeout still times out, in time."""

from __future__ import annotations

import asyncio
import time

from deskwork import ToolCall
from deskwork.tools import aexecute_tool, tool


async def test_a_tool_that_ignores_its_cancellation_times_out_anyway() -> None:
    stopped = asyncio.Event()

    @tool(timeout=0.2)
    async def stubborn(n: int) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:  # "one more thing" before giving up
            await asyncio.sleep(5)
            return "finished late"
        finally:
            stopped.set()
        return "finished"

    started = time.monotonic()
    result = await aexecute_tool(stubborn, ToolCall(id="c1", name="stubborn", arguments={"n": 1}))

    assert result.timed_out and result.content is None
    assert result.error == "tool 'stubborn' timed out after 0.2s"
    assert time.monotonic() - started < 4  # 0.2 s and a 1 s grace, not its 5 s of cleanup
    assert not stopped.is_set()  # it runs on, abandoned


async def test_a_well_behaved_tool_has_cleaned_up_when_the_timeout_is_reported() -> None:
    cleaned: list[bool] = []

    @tool(timeout=0.1)
    async def polite(n: int) -> str:
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append(True)
        return "never"

    result = await aexecute_tool(polite, ToolCall(id="c1", name="polite", arguments={"n": 1}))

    assert result.timed_out and cleaned == [True]
