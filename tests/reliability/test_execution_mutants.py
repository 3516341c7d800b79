"""Behaviour of ``deskwork.tools.execution`` that surviving mutants showed was unpinned:
how a failing hook is named, what the sync entry point says inside a loop, and what the
model sees for dataclass and plain-object tool results."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from typing import Any

import pytest
from pydantic import BaseModel, model_validator

from deskwork import ToolCall, ToolResult
from deskwork.exceptions import EventLoopRunningError
from deskwork.tools import Tool, tool
from deskwork.tools.execution import aexecute_tool, execute_tool

pytestmark = pytest.mark.reliability


def _refuse(call: ToolCall, reason: str = "no") -> None:
    raise PermissionError(reason)


class QuotaGuard:
    """A callable hook object: it has a ``__name__`` but no ``__qualname__``."""

    def __init__(self) -> None:
        self.__name__ = "quota_guard"

    def __call__(self, call: ToolCall) -> None:
        raise RuntimeError("quota spent")


def _hook_error(hook: Any) -> str:
    @tool(pre=(hook,))
    def guarded() -> str:
        """Guarded."""
        return "ran"

    result = execute_tool(guarded, ToolCall(id="c", name="guarded"))
    assert result.error is not None and result.content is None
    return result.error


def test_a_failing_hook_is_named_by_its_qualified_name() -> None:
    def deny(call: ToolCall) -> None:
        raise PermissionError("not today")

    error = _hook_error(deny)
    assert error == f"pre-hook {deny.__qualname__} failed: not today"
    assert "<locals>.deny" in error


def test_a_hook_object_with_only_a_name_is_named_by_it() -> None:
    assert _hook_error(QuotaGuard()) == "pre-hook quota_guard failed: quota spent"


def test_a_nameless_hook_is_named_by_its_repr() -> None:
    hook = functools.partial(_refuse, reason="partial says no")
    assert _hook_error(hook) == f"pre-hook {hook!r} failed: partial says no"


async def test_execute_tool_inside_a_running_loop_points_to_aexecute_tool() -> None:
    @tool()
    def ping() -> str:
        """Ping."""
        return "pong"

    call = ToolCall(id="c", name="ping")
    with pytest.raises(EventLoopRunningError, match=r"execute_tool\(\).*aexecute_tool\(\)"):
        execute_tool(ping, call)
    assert (await aexecute_tool(ping, call)).content == "pong"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Opaque:
    def __str__(self) -> str:
        return "opaque thing"


@pytest.mark.parametrize(
    ("value", "content", "data"),
    [
        (Point(1, 2), '{"x": 1, "y": 2}', {"x": 1, "y": 2}),
        (Point, str(Point), Point),  # a dataclass *class* is a plain value, not data
        (None, "", None),
    ],
)
def test_what_the_model_sees_for_a_tool_result(value: Any, content: str, data: Any) -> None:
    @tool()
    def give() -> Any:
        """Return the value."""
        return value

    result = execute_tool(give, ToolCall(id="c", name="give"))
    assert (result.error, result.content, result.data) == (None, content, data)


def test_a_plain_object_result_is_shown_as_its_text_and_kept_as_data() -> None:
    thing = Opaque()

    @tool()
    def give() -> Any:
        """Return an object JSON cannot hold."""
        return thing

    result = execute_tool(give, ToolCall(id="c", name="give"))
    assert isinstance(result, ToolResult)
    assert (result.content, result.data) == ("opaque thing", thing)


@tool(timeout=0.1)
async def stall() -> str:
    """Await for a long time."""
    await asyncio.sleep(30)
    return "never"


@pytest.mark.parametrize("with_cancel_event", [False, True])
async def test_a_timeout_is_reported_as_one(with_cancel_event: bool) -> None:
    event = asyncio.Event() if with_cancel_event else None
    call = ToolCall(id="c", name="stall")
    result = await asyncio.wait_for(aexecute_tool(stall, call, cancel_event=event), 5)
    assert (result.error, result.timed_out) == ("tool 'stall' timed out after 0.1s", True)
    assert result.exception_type == "TimeoutError"


async def test_a_cancelled_tool_says_so() -> None:
    @tool()
    async def wait_long() -> str:
        """Await for a long time."""
        await asyncio.sleep(30)
        return "never"

    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, event.set)
    call = ToolCall(id="c", name="wait_long")
    result = await asyncio.wait_for(aexecute_tool(wait_long, call, cancel_event=event), 5)
    assert (result.error, result.cancelled) == ("tool execution cancelled", True)
    assert result.exception_type == "CancelledError"


async def test_retries_back_off_exponentially(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def record(delay: float, *args: Any) -> None:
        waits.append(delay)
        await real_sleep(0)

    @tool(retries=3, retry_delay=0.01)
    async def flaky() -> str:
        """Always fail."""
        raise ConnectionError("down")

    monkeypatch.setattr(asyncio, "sleep", record)
    result = await aexecute_tool(flaky, ToolCall(id="c", name="flaky"))
    monkeypatch.undo()
    assert result.error == "ConnectionError: down"
    assert waits == [0.01, 0.02, 0.04]


def test_a_post_hook_sees_the_call_and_its_failure_keeps_the_exception() -> None:
    seen: list[str] = []
    boom = RuntimeError("audit down")

    def audit(call: ToolCall, result: ToolResult) -> None:
        seen.append(f"{call.id}:{result.content}")
        raise boom

    @tool(post=(audit,))
    def ping() -> str:
        """Ping."""
        return "pong"

    result = execute_tool(ping, ToolCall(id="c7", name="ping"))
    assert seen == ["c7:pong"]
    assert result.original_exception is boom and result.exception_type == "RuntimeError"


def test_invalid_arguments_name_every_bad_field_and_the_tool() -> None:
    @tool()
    def place(items: list[int], count: int) -> str:
        """Place items."""
        return "placed"

    call = ToolCall(id="c", name="place", arguments={"items": [1, "x"], "count": "many"})
    result = execute_tool(place, call)
    assert result.error is not None
    assert result.error.startswith("invalid arguments for tool 'place': items.1: ")
    assert "; count: " in result.error
    assert getattr(result.original_exception, "tool_name", None) == "place"
    malformed = ToolCall(id="d", name="place", error="malformed tool arguments: x")
    bad_json = execute_tool(place, malformed)
    assert getattr(bad_json.original_exception, "tool_name", None) == "place"


class Window(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end < self.start:
            raise ValueError("end before start")
        return self


def test_a_rule_over_all_arguments_is_reported_at_the_root() -> None:
    def book(start: int, end: int) -> str:
        return f"{start}-{end}"

    booking = Tool(name="book", description="Book.", callable=book, input_model=Window)
    result = execute_tool(booking, ToolCall(id="c", name="book", arguments={"start": 5, "end": 1}))
    assert result.error == (
        "invalid arguments for tool 'book': <root>: Value error, end before start"
    )
    ok = execute_tool(booking, ToolCall(id="d", name="book", arguments={"start": 1, "end": 5}))
    assert ok.content == "1-5"


def test_post_hooks_see_the_call_a_pre_hook_refused() -> None:
    seen: list[tuple[str, str | None]] = []

    def audit(call: ToolCall, result: ToolResult) -> None:
        seen.append((call.id, result.error))

    @tool(pre=(_refuse,), post=(audit,))
    def guarded() -> str:
        """Guarded."""
        return "ran"

    result = execute_tool(guarded, ToolCall(id="c9", name="guarded"))
    assert result.error is not None and result.error.endswith("failed: no")
    assert seen == [("c9", result.error)]
