"""``aexecute_tool``/``execute_tool``: hooks, validation, timeout, retries, cancellation, output."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import EventLoopRunningError, ToolCall
from deskwork.adapters.base import parse_tool_call
from deskwork.tools import ToolResult, tool
from deskwork.tools.execution import aexecute_tool, execute_tool


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="call-1", name=name, arguments=arguments)


# --------------------------------------------------------------------------- hooks


async def test_hooks_run_in_order_around_the_tool_sync_and_async() -> None:
    order: list[str] = []

    def pre_sync(call: ToolCall) -> None:
        order.append(f"pre_sync:{call.arguments['x']}")

    async def pre_async(call: ToolCall) -> None:
        await asyncio.sleep(0)
        order.append("pre_async")

    def post_sync(call: ToolCall, result: ToolResult) -> None:
        order.append(f"post_sync:{result.content}")

    async def post_async(call: ToolCall, result: ToolResult) -> None:
        await asyncio.sleep(0)
        order.append("post_async")

    @tool(pre=(pre_sync, pre_async), post=(post_sync, post_async))
    async def double(x: int) -> int:
        order.append("tool")
        return x * 2

    result = await aexecute_tool(double, _call("double", x=2))
    assert result.content == "4" and result.error is None
    assert order == ["pre_sync:2", "pre_async", "tool", "post_sync:4", "post_async"]


async def test_pre_hook_exception_prevents_execution() -> None:
    ran: list[int] = []
    seen_by_post: list[ToolResult] = []

    def strict_validation(call: ToolCall) -> None:
        if call.arguments.get("value", 0) < 0:
            raise ValueError("Value must be non-negative")

    @tool(pre=(strict_validation,), post=(lambda c, r: seen_by_post.append(r),))
    def process(value: int) -> int:
        ran.append(value)
        return value * 2

    result = await aexecute_tool(process, _call("process", value=-1))
    assert ran == []
    assert result.error is not None and "Value must be non-negative" in result.error
    assert result.exception_type == "ValueError"
    assert isinstance(result.original_exception, ValueError)
    assert seen_by_post and seen_by_post[0].error == result.error
    ok = await aexecute_tool(process, _call("process", value=3))
    assert ok.content == "6" and ran == [3]


async def test_post_hook_exception_fails_the_result() -> None:
    def failing_post_hook(call: ToolCall, result: ToolResult) -> None:
        raise Exception("Post-hook failure")

    @tool(post=(failing_post_hook,))
    def my_tool(value: str) -> str:
        return value

    result = await aexecute_tool(my_tool, _call("my_tool", value="v"))
    assert result.error is not None and "Post-hook failure" in result.error
    assert result.exception_type == "Exception"
    assert result.model_text().startswith("Error:")


async def test_pre_hook_return_value_is_ignored() -> None:
    @tool(pre=(lambda call: "ignored",))
    def f(x: int) -> int:
        return x

    assert (await aexecute_tool(f, _call("f", x=1))).content == "1"


# --------------------------------------------------------------------------- validation


async def test_validation_errors_name_the_field_and_skip_the_call() -> None:
    ran: list[int] = []

    @tool()
    def add(a: int, b: int) -> int:
        ran.append(1)
        return a + b

    missing = await aexecute_tool(add, _call("add", a=1))
    assert missing.error is not None and "b" in missing.error and "add" in missing.error
    wrong = await aexecute_tool(add, _call("add", a="x", b=1))
    assert wrong.error is not None and "a:" in wrong.error
    extra = await aexecute_tool(add, _call("add", a=1, b=2, c=3))
    assert extra.error is not None and "c" in extra.error
    assert ran == []
    coerced = await aexecute_tool(add, _call("add", a="1", b=2))
    assert coerced.content == "3"


async def test_malformed_arguments_become_an_error_result() -> None:
    @tool()
    def echo(text: str) -> str:
        return text

    call = parse_tool_call("c1", "echo", '{"text": "unterminated')
    result = await aexecute_tool(echo, call)
    assert result.error is not None
    assert "malformed tool arguments" in result.error and "echo" in result.error


# --------------------------------------------------------------------------- values


class AnalysisResult(BaseModel):
    findings: list[str]
    confidence: float


async def test_return_values_are_converted() -> None:
    @tool()
    def nothing() -> None:
        return None

    @tool()
    def number() -> int:
        return 3

    @tool()
    def mapping() -> dict[str, int]:
        return {"a": 1}

    @tool()
    def model() -> AnalysisResult:
        return AnalysisResult(findings=["x"], confidence=0.5)

    assert (await aexecute_tool(nothing, _call("nothing"))).content == ""
    assert (await aexecute_tool(number, _call("number"))).content == "3"
    mapped = await aexecute_tool(mapping, _call("mapping"))
    assert mapped.content == '{"a": 1}' and mapped.data == {"a": 1}
    modelled = await aexecute_tool(model, _call("model"))
    assert modelled.data == {"findings": ["x"], "confidence": 0.5}


async def test_tool_result_returned_directly_is_kept() -> None:
    @tool()
    def fetch_status(code: int) -> ToolResult:
        if code == 200:
            return ToolResult(content="ok", data={"code": code})
        return ToolResult(error="not ok")

    ok = await aexecute_tool(fetch_status, _call("fetch_status", code=200))
    assert (ok.content, ok.data, ok.error) == ("ok", {"code": 200}, None)
    bad = await aexecute_tool(fetch_status, _call("fetch_status", code=500))
    assert bad.error == "not ok" and bad.model_text() == "Error: not ok"


async def test_output_type_validation() -> None:
    @tool(output_type=AnalysisResult)
    def analyze(text: str) -> dict[str, Any]:
        if text == "bad":
            return {"findings": "not a list"}
        return {"findings": ["insight 1", "insight 2"], "confidence": "0.85"}

    good = await aexecute_tool(analyze, _call("analyze", text="t"))
    assert good.error is None
    assert good.data == {"findings": ["insight 1", "insight 2"], "confidence": 0.85}
    assert AnalysisResult.model_validate_json(good.content or "") == AnalysisResult(
        findings=["insight 1", "insight 2"], confidence=0.85
    )
    bad = await aexecute_tool(analyze, _call("analyze", text="bad"))
    assert bad.error is not None and "invalid output" in bad.error
    assert bad.exception_type == "ValidationError"


async def test_tool_exception_becomes_error_with_type_and_original() -> None:
    @tool()
    def boom() -> str:
        raise KeyError("missing")

    result = await aexecute_tool(boom, _call("boom"))
    assert result.error is not None and "KeyError" in result.error
    assert result.exception_type == "KeyError"
    assert isinstance(result.original_exception, KeyError)


# --------------------------------------------------------------------------- timeout/retries


async def test_async_timeout_sets_timed_out() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        await asyncio.sleep(60)
        return "late"

    started = time.perf_counter()
    result = await aexecute_tool(slow, _call("slow"))
    assert time.perf_counter() - started < 20  # not the tool's 60 s
    assert result.timed_out and not result.cancelled
    assert result.error is not None and "timed out" in result.error


async def test_sync_timeout_sets_timed_out() -> None:
    release = threading.Event()

    @tool(timeout=0.05)
    def slow_sync() -> str:
        release.wait(60)
        return "late"

    started = time.perf_counter()
    result = await aexecute_tool(slow_sync, _call("slow_sync"))
    release.set()
    assert time.perf_counter() - started < 20  # not the tool's 60 s
    assert result.timed_out and result.error is not None


async def test_retries_with_exponential_backoff() -> None:
    attempts: list[float] = []

    @tool(retries=3, retry_delay=0.02)
    def flaky() -> str:
        attempts.append(time.perf_counter())
        if len(attempts) < 4:
            raise RuntimeError(f"failure {len(attempts)}")
        return "finally"

    result = await aexecute_tool(flaky, _call("flaky"))
    assert result.content == "finally" and result.error is None
    assert len(attempts) == 4
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    for gap, expected in zip(gaps, (0.02, 0.04, 0.08), strict=True):
        assert gap >= expected * 0.9, (gaps, expected)


async def test_retries_exhausted_returns_last_error() -> None:
    attempts: list[int] = []

    @tool(retries=2, retry_delay=0.001)
    async def always_fails() -> str:
        attempts.append(1)
        raise RuntimeError(f"attempt {len(attempts)}")

    result = await aexecute_tool(always_fails, _call("always_fails"))
    assert len(attempts) == 3
    assert result.error is not None and "attempt 3" in result.error


async def test_timeouts_are_retried() -> None:
    attempts: list[int] = []

    @tool(timeout=0.02, retries=2, retry_delay=0.001)
    async def hangs() -> str:
        attempts.append(1)
        await asyncio.sleep(1)
        return "never"

    result = await aexecute_tool(hangs, _call("hangs"))
    assert len(attempts) == 3 and result.timed_out


async def test_no_retry_without_retries() -> None:
    attempts: list[int] = []

    @tool()
    def once() -> str:
        attempts.append(1)
        raise RuntimeError("x")

    await aexecute_tool(once, _call("once"))
    assert attempts == [1]


# --------------------------------------------------------------------------- cancellation


async def test_cancel_event_cancels_a_running_tool_without_retrying() -> None:
    attempts: list[int] = []
    finished: list[bool] = []

    @tool(retries=3, retry_delay=0.001)
    async def long_task(seconds: float) -> str:
        attempts.append(1)
        await asyncio.sleep(seconds)
        finished.append(True)
        return "done"

    cancel_event = asyncio.Event()

    async def cancel_soon() -> None:
        await asyncio.sleep(0.05)
        cancel_event.set()

    canceller = asyncio.ensure_future(cancel_soon())
    started = time.perf_counter()
    result = await aexecute_tool(
        long_task, _call("long_task", seconds=60), cancel_event=cancel_event
    )
    await canceller
    assert time.perf_counter() - started < 20  # not the tool's 60 s
    assert result.cancelled and not result.timed_out
    assert result.error is not None and "cancel" in result.error
    assert attempts == [1] and finished == []


async def test_cancel_event_left_unset_lets_the_tool_finish() -> None:
    @tool()
    async def quick() -> str:
        await asyncio.sleep(0.01)
        return "ok"

    result = await aexecute_tool(quick, _call("quick"), cancel_event=asyncio.Event())
    assert result.content == "ok" and not result.cancelled


# --------------------------------------------------------------------------- sync wrapper


def test_execute_tool_sync_wrapper() -> None:
    @tool()
    async def shout(text: str) -> str:
        return text.upper()

    assert execute_tool(shout, _call("shout", text="hi")).content == "HI"


async def test_execute_tool_inside_a_running_loop_raises() -> None:
    @tool()
    def f() -> str:
        return "x"

    with pytest.raises(EventLoopRunningError):
        execute_tool(f, _call("f"))


async def test_cancelling_the_caller_cancels_the_tool_under_a_cancel_event() -> None:
    started = asyncio.Event()
    cancelled: list[bool] = []

    @tool()
    async def long_task() -> str:
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "done"

    caller = asyncio.ensure_future(
        aexecute_tool(long_task, _call("long_task"), cancel_event=asyncio.Event())
    )
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0.01)
    assert cancelled == [True]  # the tool's task was not left running on its own
