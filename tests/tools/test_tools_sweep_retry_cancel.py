"""The wait between retries: a cancel_event set during it ends it at once, and a long run of
immediate retries does not overflow it."""

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


async def test_more_than_a_thousand_immediate_retries_end_in_the_last_error() -> None:
    attempts: list[int] = []

    @tool(retries=1100, retry_delay=0.0)  # poll until it works, at once
    async def poll(n: int) -> str:
        attempts.append(n)
        raise ValueError("not yet")

    result = await aexecute_tool(poll, ToolCall(id="c1", name="poll", arguments={"n": 1}))

    assert len(attempts) == 1101  # no OverflowError from the 1025th backoff
    assert result.error == "ValueError: not yet"
