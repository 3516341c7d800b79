"""What a tool returns that cannot go to the model as it is: the call fails (the model is
told, ``tool.failed`` is recorded) and the run goes on."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import math
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from deskwork import Desk, Job, ToolCall, Worker
from deskwork.core.event import EventType
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool, execute_tool


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


def _cyclic() -> Any:
    box: dict[str, Any] = {}
    box["self"] = box
    return box


def _run(value: Any) -> tuple[Desk, Any]:
    @tool
    def fetch(key: str) -> Any:
        return value

    desk = Desk(
        model="scripted/model",
        adapter=ScriptedAdapter([call_tool("fetch", key="k")], default=reply("done")),
        run_store=InMemoryRunStore(),
        storage_dir=".deskwork-unused",
    )
    return desk, desk.run(Worker(name="w", tools=[fetch]), Job(input="fetch k"))


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (_cyclic(), "RecursionError"),
        ({"row": Unprintable()}, "RuntimeError: no text for this one"),
        (Unprintable(), "RuntimeError: no text for this one"),
    ],
    ids=["cycle", "unprintable-inside", "unprintable"],
)
def test_a_value_that_cannot_be_made_text_fails_the_call_not_the_run(value: Any, why: str) -> None:
    desk, report = _run(value)
    assert report.status == "completed" and report.content == "done"
    (call,) = report.tool_calls
    assert call.result is not None and call.result.error is not None
    assert call.result.error.startswith("tool 'fetch' returned a value that cannot be given")
    assert why in call.result.error
    failed = [
        e for e in desk.run_store.get_events(report.run_id) if e.type == EventType.TOOL_FAILED
    ]
    assert [e.payload["error"] for e in failed] == [call.result.error]


def _hides_async(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """A decorator whose wrapper is a plain def: the tool looks sync, returns a coroutine."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize("timeout", [None, 30.0], ids=["calling-thread", "pool"])
def test_a_sync_tool_returning_a_coroutine_has_it_awaited(timeout: float | None) -> None:
    @tool(timeout=timeout)
    @_hides_async
    async def lookup(key: str) -> str:
        await asyncio.sleep(0)
        return f"value of {key}"

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited"
        result = execute_tool(lookup, ToolCall(id="c", name="lookup", arguments={"key": "k"}))
    assert result.error is None and result.content == "value of k"


async def test_the_returned_coroutine_keeps_the_tool_timeout() -> None:
    @tool(timeout=0.05)
    @_hides_async
    async def stalls(key: str) -> str:
        await asyncio.sleep(30)
        return "late"

    result = await aexecute_tool(stalls, ToolCall(id="c", name="stalls", arguments={"key": "k"}))
    assert result.timed_out and result.content != "late"


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@dataclasses.dataclass
class Reading:
    mean: float
    peak: float


@pytest.mark.parametrize(
    ("value", "seen"),
    [
        ({"mean": math.nan, "peak": math.inf}, {"mean": None, "peak": None}),
        ([1.5, math.nan, -math.inf], [1.5, None, None]),
        (Reading(mean=math.nan, peak=2.0), {"mean": None, "peak": 2.0}),
    ],
    ids=["dict", "list", "dataclass"],
)
async def test_nan_and_infinities_reach_the_model_as_json_null(value: Any, seen: Any) -> None:
    @tool
    def measure(sensor: str) -> Any:
        return value

    call = ToolCall(id="c", name="measure", arguments={"sensor": "a"})
    result = await aexecute_tool(measure, call)
    assert result.error is None and _strict_json(result.content) == seen  # was bare NaN
