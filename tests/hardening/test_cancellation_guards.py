"""Guards for tool cancellation and timeouts: work that was given up on really stops."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

from deskwork.core.tool_call import ToolCall
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool

WOULD_FINISH = 0.2


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def _finisher() -> tuple[list[str], Any]:
    finished: list[str] = []

    async def work() -> str:
        await asyncio.sleep(WOULD_FINISH)
        finished.append("finished")  # a tool that was not stopped gets here
        return "done"

    return finished, work


async def test_a_timed_out_async_tool_really_stops() -> None:
    finished, work = _finisher()
    result = await aexecute_tool(tool(timeout=0.05)(work), _call("work"))
    assert result.timed_out and not result.cancelled
    await asyncio.sleep(WOULD_FINISH * 2)  # past the time it would have finished
    assert finished == []


async def test_a_cancelled_async_tool_really_stops() -> None:
    finished, work = _finisher()
    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, cancel.set)
    result = await aexecute_tool(tool(work), _call("work"), cancel_event=cancel)
    assert result.cancelled and not result.timed_out
    assert finished == []  # the result came back before the tool would have finished
    await asyncio.sleep(WOULD_FINISH * 2)
    assert finished == []


async def test_timeout_with_a_cancel_event_that_is_never_set_times_out() -> None:
    finished, work = _finisher()
    result = await aexecute_tool(
        tool(timeout=0.05)(work), _call("work"), cancel_event=asyncio.Event()
    )
    assert result.timed_out and not result.cancelled
    assert result.error is not None and "timed out after 0.05s" in result.error
    await asyncio.sleep(WOULD_FINISH * 2)
    assert finished == []


async def test_a_cancel_before_the_timeout_is_a_cancellation() -> None:
    finished, work = _finisher()
    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.02, cancel.set)
    result = await aexecute_tool(tool(timeout=1.0)(work), _call("work"), cancel_event=cancel)
    assert result.cancelled and not result.timed_out
    await asyncio.sleep(WOULD_FINISH * 2)
    assert finished == []


async def test_a_cancelled_tool_is_not_retried() -> None:
    attempts: list[int] = []
    cancel = asyncio.Event()

    @tool(retries=3, retry_delay=0.01)
    async def flaky() -> str:
        attempts.append(1)
        await asyncio.sleep(1)
        return "x"

    asyncio.get_running_loop().call_later(0.02, cancel.set)
    result = await aexecute_tool(flaky, _call("flaky"), cancel_event=cancel)
    assert result.cancelled and attempts == [1]


async def test_cancel_event_with_a_sync_tool_returns_at_once() -> None:
    release = threading.Event()

    @tool
    def blocking() -> str:
        release.wait(60)
        return "late"

    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, cancel.set)
    started = time.perf_counter()
    result = await aexecute_tool(blocking, _call("blocking"), cancel_event=cancel)
    assert result.cancelled and result.content is None
    assert time.perf_counter() - started < 20  # did not wait for the thread's 60 s
    release.set()


async def test_an_already_set_cancel_event_stops_a_sync_tool_before_its_result_is_used() -> None:
    release = threading.Event()

    @tool
    def blocking() -> str:
        release.wait(5)
        return "late"

    cancel = asyncio.Event()
    cancel.set()
    result = await aexecute_tool(blocking, _call("blocking"), cancel_event=cancel)
    assert result.cancelled
    release.set()


@dataclasses.dataclass
class Point:
    x: int
    y: int
    label: str = "p"


async def test_a_tool_returning_a_dataclass_gives_json_content_and_data() -> None:
    @tool
    def where() -> Point:
        return Point(1, 2)

    @tool
    async def where_async() -> Point:
        return Point(3, 4, "q")

    result = await aexecute_tool(where, _call("where"))
    assert result.error is None
    assert result.data == {"x": 1, "y": 2, "label": "p"}
    assert result.content == '{"x": 1, "y": 2, "label": "p"}'
    other = await aexecute_tool(where_async, _call("where_async"))
    assert other.data == {"x": 3, "y": 4, "label": "q"}
