"""Sync tools run off the event loop, on the desk's daemon thread pool."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool

MODEL = "scripted/model"
RUNS = 40
SLEEP = 0.05


def _tool_then_reply(messages: list[dict[str, Any]], tools: Any) -> Turn:
    """Call the tool once, then answer (the same script serves many concurrent runs)."""
    if messages[-1]["role"] == "tool":
        return reply(f"done: {messages[-1]['content']}")
    return call_tool(tools[0]["function"]["name"])  # the worker's one tool


@tool
def work() -> str:
    """Block like a sync client would."""
    time.sleep(SLEEP)
    return threading.current_thread().name


ALL_RUNS = threading.Barrier(RUNS, timeout=30)


@tool
def meet() -> str:
    """Block until every run's call has started (the barrier breaks unless they overlap)."""
    ALL_RUNS.wait()
    return threading.current_thread().name


def _tool_output(report: Any) -> str:
    result = report.tool_calls[0].result
    assert result is not None and result.error is None
    return str(result.content)


def _desk(**kwargs: Any) -> Desk:
    adapter = ScriptedAdapter(default=_tool_then_reply)
    return Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


async def _run_many(desk: Desk, count: int, sync_tool: Any = work) -> tuple[float, list[Any]]:
    worker = Worker(name="w", tools=[sync_tool])
    started = time.perf_counter()
    reports = await asyncio.gather(*(desk.arun(worker, Job(input="go")) for _ in range(count)))
    return time.perf_counter() - started, list(reports)


async def test_concurrent_runs_with_a_sync_tool_overlap() -> None:
    ALL_RUNS.reset()
    desk = _desk(max_tool_threads=RUNS)
    _, reports = await _run_many(desk, RUNS, meet)
    assert all(r.status == "completed" for r in reports)
    # each call waited for all RUNS calls to start: one after another, the barrier breaks
    assert all(_tool_output(r).startswith("deskwork-tool") for r in reports)
    desk.close()


async def test_a_sync_tool_does_not_run_on_the_loop_thread() -> None:
    desk = _desk()
    report = await desk.arun(Worker(name="w", tools=[work]), Job(input="go"))
    assert report.status == "completed"
    thread_name = _tool_output(report)
    assert thread_name != threading.current_thread().name
    assert thread_name.startswith("deskwork-tool")
    desk.close()


async def test_the_loop_keeps_ticking_while_a_sync_tool_blocks() -> None:
    desk = _desk()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    await desk.arun(Worker(name="w", tools=[work]), Job(input="go"))
    task.cancel()
    assert ticks >= 3  # a blocked loop would not tick during the 50 ms tool call
    desk.close()


async def test_max_tool_threads_bounds_how_many_sync_tools_run_at_once() -> None:
    desk = _desk(max_tool_threads=1)
    elapsed, reports = await _run_many(desk, 4)
    assert all(r.status == "completed" for r in reports)
    assert elapsed >= 4 * SLEEP * 0.9  # one thread: the four calls take turns
    desk.close()


async def test_async_tools_stay_on_the_loop() -> None:
    @tool
    async def where() -> str:
        return threading.current_thread().name

    adapter = ScriptedAdapter([call_tool("where"), reply("ok")])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    report = await desk.arun(Worker(name="w", tools=[where]), Job(input="go"))
    assert _tool_output(report) == threading.current_thread().name


def test_max_tool_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_tool_threads"):
        Desk(model=MODEL, max_tool_threads=0)
