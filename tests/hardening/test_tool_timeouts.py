"""A timed-out sync tool does not hold the desk, its pool, or the process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.tools._pool import ToolThreadPool

MODEL = "scripted/model"

_SCRIPT = textwrap.dedent(
    """
    import time
    from deskwork import Desk, Job, Worker
    from deskwork.store import InMemoryRunStore
    from deskwork.testing import ScriptedAdapter, call_tool, reply
    from deskwork.tools import tool

    @tool(timeout=0.2)
    def stuck() -> str:
        time.sleep(120)
        return "too late"

    adapter = ScriptedAdapter([call_tool("stuck"), reply("gave up")])
    desk = Desk(model="scripted/model", adapter=adapter, run_store=InMemoryRunStore())
    started = time.perf_counter()
    report = desk.run(Worker(name="w", tools=[stuck]), Job(input="go"))
    result = report.tool_calls[0].result
    print(report.status, result.timed_out, round(time.perf_counter() - started, 2), flush=True)
    desk.close()
    """
)


def test_a_process_whose_sync_tool_timed_out_exits_at_once() -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=110
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    status, timed_out, run_seconds = done.stdout.split()
    assert (status, timed_out) == ("completed", "True")
    assert float(run_seconds) < 30  # the report came back after the timeout, not the 120 s
    assert elapsed < 90, elapsed  # and the process did not wait 120 s for the tool


def test_close_does_not_wait_for_a_timed_out_sync_tool() -> None:
    release = threading.Event()

    @tool(timeout=0.1)
    def stuck() -> str:
        release.wait(60)
        return "late"

    adapter = ScriptedAdapter([call_tool("stuck"), reply("ok")])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[stuck]), Job(input="go"))
    assert report.tool_calls[0].result is not None and report.tool_calls[0].result.timed_out
    started = time.perf_counter()
    desk.close()
    assert time.perf_counter() - started < 20  # it did not wait for the stuck call's 60 s
    release.set()


def test_a_timed_out_sync_tool_gives_its_thread_slot_back() -> None:
    """With one tool thread, a stuck call does not make the next call wait for it."""
    release = threading.Event()

    @tool(timeout=0.1)
    def stuck() -> str:
        release.wait(60)
        return "late"

    @tool
    def quick() -> str:
        return "fast"

    adapter = ScriptedAdapter([call_tool("stuck"), call_tool("quick"), reply("ok")])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), max_tool_threads=1)
    started = time.perf_counter()
    report = desk.run(Worker(name="w", tools=[stuck, quick]), Job(input="go"))
    elapsed = time.perf_counter() - started
    results = [c.result for c in report.tool_calls]
    assert results[0] is not None and results[0].timed_out
    assert results[1] is not None and results[1].content == "fast"
    assert elapsed < 20, elapsed  # the quick call did not wait for the stuck one's 60 s
    assert desk.tool_pool.running_abandoned == 1  # still running, on its own thread
    release.set()
    deadline = time.monotonic() + 2
    while desk.tool_pool.running_abandoned and time.monotonic() < deadline:
        time.sleep(0.01)
    assert desk.tool_pool.running_abandoned == 0
    desk.close()


async def test_the_pool_keeps_its_size_when_a_call_that_waited_in_the_queue_is_abandoned() -> None:
    pool = ToolThreadPool(1)
    release_a, release_b = threading.Event(), threading.Event()
    started_b = threading.Event()

    def second_call() -> bool:
        started_b.set()
        return release_b.wait(5)

    first = pool.start(lambda: release_a.wait(5))
    second = pool.start(second_call)  # queued behind the first
    release_a.set()
    assert await asyncio.wait_for(first, 2) is True
    assert await asyncio.to_thread(started_b.wait, 2)
    second.cancel()
    pool.abandon(second)  # it timed out: it runs on, but no longer holds the slot
    assert pool.running_abandoned == 1
    assert await asyncio.wait_for(pool.start(lambda: "third"), 1) == "third"
    release_b.set()
    pool.shutdown()


async def test_an_abandoned_call_that_never_started_never_runs() -> None:
    pool = ToolThreadPool(1)
    release = threading.Event()
    ran: list[str] = []
    busy = pool.start(lambda: release.wait(5))
    queued = pool.start(lambda: ran.append("queued"))
    queued.cancel()
    pool.abandon(queued)
    assert pool.running_abandoned == 0
    release.set()
    await asyncio.wait_for(busy, 2)
    assert await asyncio.wait_for(pool.start(lambda: "after"), 2) == "after"
    assert ran == []
    pool.shutdown()
