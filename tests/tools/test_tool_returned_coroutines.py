"""A sync tool that returns a coroutine (an ``async def`` behind a decorator that hides it):
the coroutine is awaited where the call runs, or closed when nobody will await it. Never left
to warn "coroutine ... was never awaited" when collected, holding what its frame holds."""

from __future__ import annotations

import asyncio
import functools
import gc
import threading
import time
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from deskwork.core.tool_call import ToolCall
from deskwork.tools import tool
from deskwork.tools._pool import ToolThreadPool
from deskwork.tools.execution import aexecute_tool


def _hides_async(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """A decorator whose wrapper is a plain def: the tool looks sync, returns a coroutine."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@tool(isolation="process", timeout=30)
@_hides_async
async def lookup(key: str) -> str:
    await asyncio.sleep(0)
    return f"value of {key}"


async def test_a_process_tool_returning_a_coroutine_has_it_awaited_in_its_process() -> None:
    # was "cannot send the tool's result back: cannot pickle 'coroutine' object"
    result = await aexecute_tool(lookup, ToolCall(id="c", name="lookup", arguments={"key": "k"}))
    assert result.error is None and result.content == "value of k"


async def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def test_the_coroutine_of_a_timed_out_pool_call_is_closed() -> None:
    release = threading.Event()
    returned: list[weakref.ref[Any]] = []

    async def late(key: str) -> str:
        return f"late {key}"

    @tool(timeout=0.05)
    def slow(key: str) -> Any:
        release.wait(10)  # returns its coroutine only after the call timed out
        coroutine = late(key)
        returned.append(weakref.ref(coroutine))
        return coroutine

    pool = ToolThreadPool(2, idle_seconds=0.05)  # its thread exits (dropping what it held) soon
    call = ToolCall(id="c", name="slow", arguments={"key": "k"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await aexecute_tool(slow, call, pool=pool)
        release.set()
        await _until(lambda: bool(returned) and returned[0]() is None)
        gc.collect()
    assert result.timed_out
    assert not [w for w in caught if "was never awaited" in str(w.message)]
