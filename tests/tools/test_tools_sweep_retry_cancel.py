"""A cancel_event set while a tool with retries waits to retry ends the wait at once."""

from __future__ import annotations

import asyncio
import time

from deskwork import ToolCall
from deskwork.tools import aexecute_tool, tool


async def test_cancelling_during_the_backoff_ends_the_call_without_another_attempt() -> None:
    attempts: list[str] = []
    seen: list[bool] = []

    @tool(
        retries=3,
        retry_delay=30.0,
        pre=(lambda call: attempts.append("pre"),),
        post=(lambda call, result: seen.append(result.cancelled),),
    )
    async def flaky(n: int) -> str:
        attempts.append("call")
        raise ValueError("down")

    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.1, cancel.set)
    started = time.monotonic()

    result = await aexecute_tool(
        flaky, ToolCall(id="c1", name="flaky", arguments={"n": 1}), cancel_event=cancel
    )

    assert time.monotonic() - started < 10  # not the 30 s backoff
    assert result.cancelled and result.error == "tool execution cancelled"
    assert attempts == ["pre", "call"]  # no pre-hook for an attempt that never started
    assert seen == [False, True]  # the post-hooks see the failure, then the cancellation
