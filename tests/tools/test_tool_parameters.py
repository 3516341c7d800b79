"""``@tool`` refuses, at definition, parameters every call would get wrong."""

from __future__ import annotations

import socket
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from deskwork.core.tool_call import ToolCall
from deskwork.exceptions import ConfigurationError
from deskwork.tools import tool
from deskwork.tools.execution import execute_tool


def test_a_positional_only_parameter_is_refused() -> None:
    def add(a: int, /, b: int) -> int:
        return a + b

    with pytest.raises(ConfigurationError, match="'a' of tool 'add' is positional-only"):
        tool(add)
    with pytest.raises(ConfigurationError, match="positional-only"):
        tool(len)


@pytest.mark.parametrize("param", ["_secret", "__x", "model_config"])
def test_a_parameter_pydantic_drops_or_takes_as_config_is_refused(param: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"def look({param}: int) -> int:\n    return {param}", namespace)
    with pytest.raises(ConfigurationError, match=f"parameter '{param}' of tool 'look'"):
        tool(namespace["look"])  # type: ignore[call-overload]


def test_a_type_pydantic_cannot_validate_names_its_parameter() -> None:
    def send(host: str, sock: socket.socket) -> str:
        return host

    with pytest.raises(ConfigurationError, match="parameter 'sock' of tool 'send'"):
        tool(send)


def test_a_type_without_json_schema_is_refused_at_definition() -> None:
    def run(callback: Callable[[], int]) -> int:
        return callback()

    with pytest.raises(ConfigurationError, match="tool 'run': no JSON schema"):
        tool(run)


def test_an_unresolvable_annotation_is_a_clear_error() -> None:
    def find(query: Missing) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "x"

    with pytest.raises(ConfigurationError, match="tool 'find': cannot read its parameters"):
        tool(find)


def test_generator_functions_are_refused() -> None:
    def numbers(n: int) -> Iterator[int]:
        yield n

    async def stream(n: int) -> AsyncIterator[int]:
        yield n

    for fn in (numbers, stream):
        with pytest.raises(ConfigurationError, match="generator function"):
            tool(fn)


class Shop:
    def price(self, item: str) -> int:
        return len(item)


def test_a_method_decorated_in_its_class_body_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"takes 'self'.*tool\(Shop\(\)\.price\)"):
        tool(Shop.price)
    bound = tool(Shop().price)
    assert list(bound.schema["properties"]) == ["item"]
    result = execute_tool(bound, ToolCall(id="c", name="price", arguments={"item": "tea"}))
    assert result.data == 3


def test_parameters_named_like_model_attributes_work_without_warnings() -> None:
    def fetch(json: str, schema: str, copy: int = 1) -> str:
        return json + schema * copy

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fetcher = tool(fetch)
    call = ToolCall(id="c", name="fetch", arguments={"json": "a", "schema": "b", "copy": 2})
    assert execute_tool(fetcher, call).content == "abb"
