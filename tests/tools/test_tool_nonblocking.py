"""``@tool(blocking=False)``: a sync tool its author declares quick runs on the event loop's
thread, with no hand-off to a pool thread (issue 13); everything else about the call stays."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import pytest

from deskwork import Desk, Job, ToolCall, Worker
from deskwork._sync import run_sync
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool, transfer_to_agent_tool
from deskwork.tools._pool import ToolThreadPool
from deskwork.tools.execution import aexecute_tool

marker: contextvars.ContextVar[str] = contextvars.ContextVar("nonblocking_marker", default="unset")


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="call-1", name=name, arguments=arguments)


def _has_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@tool(blocking=False)
def quick_mark() -> str:
    """Thread name, the caller's context variable, whether a loop runs; then set the variable."""
    seen = marker.get()
    marker.set("set by the tool")
    return f"{threading.current_thread().name}|{seen}|{_has_running_loop()}"


@tool
def pooled_mark() -> str:
    """The same, on the pool (the default)."""
    return f"{threading.current_thread().name}|{marker.get()}|{_has_running_loop()}"


async def test_a_nonblocking_sync_tool_runs_on_the_loop_thread_as_a_pool_thread_would() -> None:
    marker.set("run-3")
    result = await aexecute_tool(quick_mark, _call("quick_mark"))
    # the loop's own thread, the caller's context seen but not changed, no running loop
    # visible to the function (so it may make sync calls of its own, as on a pool thread)
    assert result.content == f"{threading.current_thread().name}|run-3|False"
    assert marker.get() == "run-3"
    pooled = await aexecute_tool(pooled_mark, _call("pooled_mark"))
    assert pooled.content is not None and pooled.content.startswith("deskwork-tool")
    assert pooled.content.endswith("|run-3|False")


async def test_a_nonblocking_tool_keeps_validation_hooks_retries_and_errors() -> None:
    seen: list[str] = []
    attempts: list[int] = []

    @tool(
        blocking=False,
        retries=2,
        retry_delay=0.001,
        pre=(lambda call: seen.append(f"pre:{call.arguments}"),),
        post=(lambda call, result: seen.append(f"post:{result.content}"),),
    )
    def flaky(n: int) -> int:
        attempts.append(n)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return n * 2

    result = await aexecute_tool(flaky, _call("flaky", n=21))
    assert (result.content, result.error, attempts) == ("42", None, [21, 21, 21])
    assert seen == ["pre:{'n': 21}", "post:None"] * 2 + ["pre:{'n': 21}", "post:42"]

    invalid = await aexecute_tool(flaky, _call("flaky", n="many"))
    assert invalid.exception_type == "ToolValidationError" and len(attempts) == 3

    @tool(blocking=False)
    def refuse() -> str:
        raise PermissionError("not yours")

    failed = await aexecute_tool(refuse, _call("refuse"))
    assert (failed.error, failed.exception_type) == (
        "PermissionError: not yours",
        "PermissionError",
    )


async def test_a_run_with_a_nonblocking_tool_emits_the_same_events() -> None:
    kinds: list[list[str]] = []
    for chosen in (quick_mark, pooled_mark):
        desk = Desk(
            model="scripted/m",
            adapter=ScriptedAdapter([call_tool(chosen.name), reply("done")]),
            run_store=InMemoryRunStore(),
        )
        report = await desk.arun(Worker(name="w", tools=[chosen]), Job(input="go"))
        assert report.status == "completed", report.errors
        assert report.tool_calls[0].result is not None
        assert report.tool_calls[0].result.error is None
        kinds.append([str(event.type) for event in report.events])
        desk.close()
    assert kinds[0] == kinds[1]
    assert "tool.started" in kinds[0] and "tool.completed" in kinds[0]


def test_sync_api_runs_a_nonblocking_tool_on_the_calling_thread_next_to_other_tasks() -> None:
    """Under a sync API a nonblocking tool stays on the calling thread even while another
    task waits on the loop (where a default sync tool goes to the pool)."""

    async def both() -> list[str]:
        ticker = asyncio.ensure_future(asyncio.sleep(0.5))  # someone else waits on this loop
        quick = await aexecute_tool(quick_mark, _call("quick_mark"))
        pooled = await aexecute_tool(pooled_mark, _call("pooled_mark"))
        ticker.cancel()
        return [str(quick.content).split("|")[0], str(pooled.content).split("|")[0]]

    quick, pooled = run_sync(both())
    assert quick == threading.current_thread().name and pooled.startswith("deskwork-tool")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 5}, "timeout"),
        ({"isolation": "process"}, "isolation"),
    ],
)
def test_blocking_false_refuses_what_it_cannot_honour(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):

        @tool(blocking=False, **options)
        def slow() -> str:
            return "never"


def test_blocking_false_is_for_sync_tools() -> None:
    with pytest.raises(ValueError, match="sync"):

        @tool(blocking=False)
        async def already_on_the_loop() -> str:
            return "async tools always run on the loop"


async def test_the_handoff_tool_runs_without_a_pool_thread() -> None:
    """deskwork's own quick sync tools are declared so: a shut-down pool would fail them."""
    pool = ToolThreadPool(1)
    pool.shutdown()
    handoff = transfer_to_agent_tool(["coder"])
    call = _call(handoff.name, agent_name="coder")
    assert (await aexecute_tool(handoff, call, pool=pool)).content == "Transferring to coder"
    refused = await aexecute_tool(pooled_mark, _call("pooled_mark"), pool=pool)
    assert refused.error is not None and "shut down" in refused.error
