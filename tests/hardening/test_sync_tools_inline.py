"""Under a sync API whose loop runs nothing else, a sync tool runs on the calling thread
(issue 13: no thread hand-off per tool call); wherever another run, call or handler could
wait on the loop, sync tools still run on the desk's pool threads (issue 12 item 1)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from deskwork import Desk, Job, Worker
from deskwork._sync import run_sync
from deskwork.core.tool_call import ToolCall
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool

MODEL = "scripted/model"
T = TypeVar("T")
marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


@tool
def where() -> str:
    """The name of the thread the tool runs on."""
    return threading.current_thread().name


@tool
def mark() -> str:
    """Set a context variable; say what it was (a pool thread runs each call in a copy of the
    run's context, so a call never sees what an earlier call set)."""
    seen = marker.get()
    marker.set("set by the tool")
    return f"{threading.current_thread().name}|{seen}"


@tool(timeout=5)
def where_with_timeout() -> str:
    """The same, with a timeout (which only a pool thread can honour)."""
    return threading.current_thread().name


NAPPERS = threading.Barrier(2, timeout=30)  # broken unless both naps overlap


@tool
def nap() -> str:
    """Block until the other call of the turn blocks too, like two sync clients at once."""
    NAPPERS.wait()
    return threading.current_thread().name


def _desk(*turns: Turn) -> Desk:
    return Desk(model=MODEL, adapter=ScriptedAdapter(list(turns)), run_store=InMemoryRunStore())


def _results(report: Any) -> list[str]:
    assert report.status == "completed", report.errors
    return [str(c.result.content) for c in report.tool_calls]


def _on_a_fresh_thread(fn: Callable[[], T]) -> T:
    """``fn()`` on a new thread (whose sync-bridge loop holds no task left by other tests)."""
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(fn).result()


def test_desk_run_runs_a_sync_tool_on_the_calling_thread() -> None:
    desk = _desk(*[call_tool("mark"), call_tool("mark"), reply("ok")] * 3)

    def three_runs() -> tuple[list[list[str]], str]:
        reports = [desk.run(Worker(name="w", tools=[mark]), Job(input="go")) for _ in range(3)]
        return [_results(r) for r in reports], threading.current_thread().name

    results, caller = _on_a_fresh_thread(three_runs)
    # each time (the loop's bookkeeping is back to the one call after every run), and each
    # call in a copy of the context, as on a pool thread
    assert results == [[f"{caller}|unset"] * 2] * 3
    desk.close()


def test_a_sync_tool_with_a_timeout_still_runs_on_a_pool_thread() -> None:
    desk = _desk(call_tool("where_with_timeout"), reply("ok"))
    report = desk.run(Worker(name="w", tools=[where_with_timeout]), Job(input="go"))
    assert _results(report)[0].startswith("deskwork-tool")
    desk.close()


def test_parallel_calls_of_one_turn_still_run_on_pool_threads_at_once() -> None:
    NAPPERS.reset()
    desk = _desk(call_tools(("nap", {}), ("nap", {})), reply("ok"))
    report = desk.run(Worker(name="w", tools=[nap]), Job(input="go"))
    names = _results(report)  # a call that waited in vain for the other holds an error
    assert all(name.startswith("deskwork-tool") for name in names) and len(set(names)) == 2


def test_a_sync_tool_on_the_calling_thread_can_make_sync_calls_of_its_own() -> None:
    inner = _desk(reply("inner answer"), reply("inner answer"))

    @tool
    def ask() -> str:
        """Run another worker synchronously, and asyncio.run something."""
        nested = inner.run(Worker(name="inner"), Job(input="hi"))
        return f"{nested.content} / {asyncio.run(asyncio.sleep(0, 'asyncio.run ok'))}"

    desk = _desk(call_tool("ask"), reply("ok"), call_tool("ask"), reply("ok"))
    report = desk.run(Worker(name="w", tools=[ask]), Job(input="go"))
    assert _results(report) == ["inner answer / asyncio.run ok"]
    again = desk.run(Worker(name="w", tools=[ask]), Job(input="go"))  # the loops are reusable
    assert _results(again) == ["inner answer / asyncio.run ok"]


def test_while_other_tasks_run_on_the_loop_a_sync_tool_goes_to_a_pool_thread() -> None:
    async def both() -> list[str]:
        ticker = asyncio.ensure_future(asyncio.sleep(0.5))  # someone else waits on this loop
        result = await aexecute_tool(where, ToolCall(id="c", name="where", arguments={}))
        ticker.cancel()
        return [str(result.content)]

    assert run_sync(both())[0].startswith("deskwork-tool")


async def test_the_async_api_never_runs_a_sync_tool_on_the_loop_thread() -> None:
    desk = _desk(call_tool("where"), reply("ok"))
    report = await desk.arun(Worker(name="w", tools=[where]), Job(input="go"))
    assert _results(report)[0].startswith("deskwork-tool")
    desk.close()
