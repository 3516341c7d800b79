"""``@tool`` on callables other than a plain named function, and tool names providers refuse."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from deskwork import Desk
from deskwork.core.tool_call import ToolCall
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter
from deskwork.tools import Tool, tool
from deskwork.tools.execution import execute_tool
from deskwork.tools.subworkers import create_subworker_tool


def _call(t: Tool, **arguments: object) -> object:
    result = execute_tool(t, ToolCall(id="c1", name=t.name, arguments=arguments))
    assert result.error is None, result.error
    return result.data


def test_a_lambda_needs_a_name_providers_accept() -> None:
    with pytest.raises(ConfigurationError, match=r"invalid tool name '<lambda>'.*name="):
        tool(lambda x: x)
    named = tool(name="double")(lambda x: 2 * x)
    assert named.name == "double" and _call(named, x=3) == 6


@pytest.mark.parametrize("name", ["my tool", "a.b", "", "x" * 65, "café", 5])
def test_names_providers_refuse_fail_at_definition(name: object) -> None:
    def f(x: int) -> int:
        return x

    with pytest.raises(ConfigurationError, match="invalid tool name"):
        tool(name=name)(f)  # type: ignore[call-overload]


def test_a_tool_made_without_the_decorator_checks_its_name_too(tmp_path: Path) -> None:
    desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir=tmp_path / ".deskwork")
    with pytest.raises(ConfigurationError, match="invalid tool name 'spawn it'"):
        create_subworker_tool(desk=desk, name="spawn it")


def test_a_partial_is_a_tool_with_a_name_and_its_function_s_types() -> None:
    def scale(factor: int, value: int) -> int:
        return factor * value

    with pytest.raises(ConfigurationError, match=r"has no __name__: pass @tool\(name=\.\.\.\)"):
        tool(functools.partial(scale, 3))
    triple = tool(name="triple")(functools.partial(scale, 3))
    assert triple.schema["properties"]["value"]["type"] == "integer"
    assert _call(triple, value="4") == 12  # validated (coerced) as the function's int


class Counter:
    def __init__(self, start: int) -> None:
        self.start = start

    def __call__(self, step: int) -> int:
        return self.start + step


def test_a_callable_object_is_a_tool_typed_by_its_call() -> None:
    with pytest.raises(ConfigurationError, match="has no __name__"):
        tool(Counter(1))
    count = tool(name="count")(Counter(10))
    assert count.schema["properties"]["step"]["type"] == "integer"
    assert _call(count, step="5") == 15


def test_a_class_is_a_tool_typed_by_its_init() -> None:
    make = tool(Counter)
    assert make.name == "Counter"
    assert make.schema["properties"]["start"]["type"] == "integer"
    assert make.input_model.model_validate({"start": "2"}).start == 2  # type: ignore[attr-defined]


def test_something_not_callable_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs a function, not int"):
        tool(5)  # type: ignore[call-overload]


class Fetch:
    async def __call__(self, url: str) -> str:
        return f"fetched {url}"


def test_an_object_with_an_async_call_is_awaited() -> None:
    # its coroutine was the "result" the model saw: '<coroutine object Fetch.__call__ ...>'
    fetch = tool(name="fetch")(Fetch())
    result = execute_tool(fetch, ToolCall(id="c1", name="fetch", arguments={"url": "a.b"}))
    assert (result.error, result.content) == (None, "fetched a.b")
    with pytest.raises(ValueError, match="for sync"):
        tool(name="fetch", isolation="process")(Fetch())
