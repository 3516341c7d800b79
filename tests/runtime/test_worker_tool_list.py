"""``Worker(tools=...)``: what cannot be offered to a model is refused when the worker is
made, naming it, instead of failing (or silently losing a tool) when it runs."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import ConfigurationError, Worker
from deskwork.tools import tool


def search(query: str) -> str:
    return f"results for {query}"


@tool
def lookup(key: str) -> str:
    return key


def test_a_plain_function_is_refused_with_the_fix() -> None:
    # was: accepted, then the run failed at its first model call (no to_provider)
    with pytest.raises(ConfigurationError, match=r"Worker 'w': <function search .*decorate it"):
        Worker(name="w", tools=[lookup, search])  # type: ignore[list-item]


@pytest.mark.parametrize("tools", [lookup, "lookup"], ids=["one-tool", "text"])
def test_one_tool_or_a_text_instead_of_a_list_is_refused(tools: Any) -> None:
    with pytest.raises(ConfigurationError, match="tools takes a list of tools"):
        Worker(name="w", tools=tools)


def test_two_tools_with_one_name_are_refused() -> None:
    @tool(name="lookup")
    def other_lookup(key: str) -> str:
        return key.upper()

    # was: the later one silently replaced the first
    with pytest.raises(ConfigurationError, match="two different tools are named 'lookup'"):
        Worker(name="w", tools=[lookup, other_lookup])


def test_the_same_tool_twice_counts_once() -> None:
    assert [t.name for t in Worker(name="w", tools=[lookup, lookup]).tools] == ["lookup"]
