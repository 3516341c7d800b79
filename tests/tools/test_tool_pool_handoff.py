"""The async API's hand-off of a sync tool to a pool thread (issue 13: one asyncio future
completed by the pool thread): what a caller relies on, whatever the mechanism."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from deskwork import ToolCall
from deskwork.tools import tool
from deskwork.tools._pool import ToolThreadPool
from deskwork.tools.execution import aexecute_tool

request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="unset")


@tool
def who() -> str:
    """Thread name and the caller's context variable; the tool then sets the variable."""
    seen = request.get()
    request.set("set by the tool")
    return f"{threading.current_thread().name}|{seen}"


@tool
def first_of_nothing() -> str:
    """Raise StopIteration, as ``next()`` on an empty iterator does."""
    return next(iter([]))


@tool
def refuse(reason: str) -> str:
    """Raise a PermissionError."""
    raise PermissionError(reason)


@pytest.fixture
def pool() -> Iterator[ToolThreadPool]:
    made = ToolThreadPool(2, name="handoff")
    yield made
    made.shutdown()


async def test_a_sync_tool_sees_the_callers_context_and_cannot_change_it(
    pool: ToolThreadPool,
) -> None:
    request.set("run-7")
    result = await aexecute_tool(who, ToolCall(id="c", name="who"), pool=pool)
    assert result.content is not None
    thread, seen = result.content.split("|")
    assert thread.startswith("handoff-") and seen == "run-7"
    assert request.get() == "run-7"  # the tool ran in a copy of the context


async def test_a_sync_tool_error_keeps_its_type_and_exception(pool: ToolThreadPool) -> None:
    call = ToolCall(id="c", name="refuse", arguments={"reason": "not yours"})
    result = await aexecute_tool(refuse, call, pool=pool)
    assert (result.error, result.exception_type) == (
        "PermissionError: not yours",
        "PermissionError",
    )
    assert isinstance(result.original_exception, PermissionError)


async def test_a_sync_tool_raising_stop_iteration_fails_instead_of_hanging(
    pool: ToolThreadPool,
) -> None:
    call = ToolCall(id="c", name="first_of_nothing")
    result = await asyncio.wait_for(aexecute_tool(first_of_nothing, call, pool=pool), 5)
    assert result.error is not None and "StopIteration" in result.error
    assert isinstance(result.original_exception, RuntimeError)
    assert isinstance(result.original_exception.__cause__, StopIteration)


async def test_a_cancelled_caller_abandons_the_running_call(pool: ToolThreadPool) -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def stuck() -> str:
        """Block until released."""
        started.set()
        release.wait(10)
        return "late"

    task = asyncio.ensure_future(aexecute_tool(stuck, ToolCall(id="c", name="stuck"), pool=pool))
    assert await asyncio.to_thread(started.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pool.running_abandoned == 1  # it runs on, without holding a slot
    release.set()
    deadline = time.monotonic() + 5
    while pool.running_abandoned and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert pool.running_abandoned == 0


def test_a_call_that_outlives_its_loop_leaves_the_pool_working() -> None:
    pool = ToolThreadPool(1)  # its one thread must survive
    release = threading.Event()

    async def start_and_leave() -> asyncio.Future[Any]:
        return pool.start(lambda: release.wait(10))

    asyncio.run(start_and_leave())  # that loop is closed before the call returns
    release.set()

    async def again() -> str:
        return str(await asyncio.wait_for(pool.start(lambda: "still working"), 5))

    assert asyncio.run(again()) == "still working"
    pool.shutdown()


async def test_a_shut_down_pool_refuses_calls_as_a_tool_error(pool: ToolThreadPool) -> None:
    pool.shutdown()
    result = await aexecute_tool(who, ToolCall(id="c", name="who"), pool=pool)
    assert result.error == "RuntimeError: the tool pool is shut down (the desk was closed)"


async def test_many_concurrent_calls_all_complete_on_a_small_pool(pool: ToolThreadPool) -> None:
    values = await asyncio.gather(*(pool.start(lambda i=i: i * i) for i in range(200)))
    assert values == [i * i for i in range(200)]


async def test_one_call_after_another_reuses_one_thread() -> None:
    """A pool starts a thread only when no idle one can take the call (a sync client kept in
    a thread-local stays warm across calls)."""
    pool = ToolThreadPool(8)
    names = [await pool.start(lambda: threading.current_thread().name) for _ in range(20)]
    pool.shutdown()
    assert set(names) == {names[0]}


async def test_a_result_for_a_caller_that_gave_up_is_dropped_quietly() -> None:
    """The caller stops waiting just as the function returns: nothing is reported to the
    loop's exception handler and the pool goes on working."""
    pool = ToolThreadPool(1)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    futures: list[asyncio.Future[Any]] = []
    known = threading.Event()

    def give_up_late() -> None:
        time.sleep(0.1)  # on the loop: meanwhile the pool thread sends the result
        futures[0].cancel()

    def give_up_as_it_returns() -> str:
        known.wait(5)
        loop.call_soon_threadsafe(give_up_late)  # runs before the result arrives
        return "too late"

    futures.append(pool.start(give_up_as_it_returns))
    known.set()
    with pytest.raises(asyncio.CancelledError):
        await futures[0]
    assert await asyncio.wait_for(pool.start(lambda: "next"), 5) == "next"
    await asyncio.sleep(0.01)
    pool.shutdown()
    assert reported == []


async def test_a_thread_that_cannot_start_fails_the_call_and_the_pool_recovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = ToolThreadPool(2, name="starved")
    real_start = threading.Thread.start

    def no_threads(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        pool.start(lambda: "never")
    monkeypatch.setattr(threading.Thread, "start", real_start)
    # nothing was counted for the failed start: both slots are still there for two calls
    gate = threading.Event()
    first, second = pool.start(gate.wait), pool.start(lambda: threading.current_thread().name)
    assert (await asyncio.wait_for(second, 5)).startswith("starved-")
    gate.set()
    assert await asyncio.wait_for(first, 5) is True
    pool.shutdown()


def test_bursts_from_two_loops_on_one_pool_each_get_their_own_results() -> None:
    """Calls that end together share one wake-up of their loop; each caller still gets its
    own result, and no loop gets another's."""
    pool = ToolThreadPool(4, name="burst")

    async def burst(offset: int) -> list[Any]:
        return list(await asyncio.gather(*(pool.start(lambda i=i: offset + i) for i in range(300))))

    with ThreadPoolExecutor(2) as callers:
        firsts = [callers.submit(asyncio.run, burst(offset)) for offset in (0, 10_000)]
        results = [first.result(60) for first in firsts]
    pool.shutdown()
    assert results == [list(range(300)), list(range(10_000, 10_300))]


def test_the_pool_keeps_no_loop_closed_before_its_results_were_collected() -> None:
    pool = ToolThreadPool(1)
    release = threading.Event()
    loop = asyncio.new_event_loop()

    async def start() -> asyncio.Future[Any]:
        return pool.start(lambda: release.wait(10))

    loop.run_until_complete(start())  # the loop stops before the call ends
    release.set()
    ready = loop._ready  # type: ignore[attr-defined]  # asyncio's queue of ready callbacks
    deadline = time.monotonic() + 30
    while not ready and time.monotonic() < deadline:  # until the wake-up is queued on it
        time.sleep(0.001)
    assert ready
    loop.close()  # without running the wake-up
    closed = weakref.ref(loop)
    del loop

    async def again() -> str:
        return str(await asyncio.wait_for(pool.start(lambda: "next"), 5))

    assert asyncio.run(again()) == "next"
    pool.shutdown()
    gc.collect()
    assert closed() is None


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


async def _until_no_threads(prefix: str, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while _threads_named(prefix) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


async def test_idle_threads_exit_and_a_later_call_starts_one_again() -> None:
    """A pool nobody shuts down (a desk never closed) keeps no idle threads."""
    pool = ToolThreadPool(4, name="idler", idle_seconds=0.05)
    gate = threading.Event()
    calls = [pool.start(lambda: gate.wait(5)) for _ in range(3)]  # three threads at once
    assert len(_threads_named("idler-")) == 3
    gate.set()
    assert await asyncio.wait_for(asyncio.gather(*calls), 5) == [True, True, True]
    await _until_no_threads("idler-")
    assert _threads_named("idler-") == []
    # every slot is free again: four calls run at once
    meet = threading.Barrier(4, timeout=5)

    def meet_all() -> str:
        meet.wait()
        return threading.current_thread().name

    names = await asyncio.wait_for(asyncio.gather(*(pool.start(meet_all) for _ in range(4))), 10)
    assert len(set(names)) == 4 and all(n.startswith("idler-") for n in names)
    await _until_no_threads("idler-")
    assert _threads_named("idler-") == []


async def test_calls_that_race_a_threads_idle_exit_all_run() -> None:
    """A call handed over just as the thread's idle wait ends is run, by it or a new one."""
    pool = ToolThreadPool(2, name="racer", idle_seconds=0.001)
    values: list[int] = []
    for i in range(300):
        values.append(await asyncio.wait_for(pool.start(lambda i=i: i), 5))
        await asyncio.sleep(0.001 * (i % 3))  # around the idle time
    assert values == list(range(300))
    await _until_no_threads("racer-")
    assert _threads_named("racer-") == []


def test_idle_seconds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_seconds"):
        ToolThreadPool(1, idle_seconds=0)
