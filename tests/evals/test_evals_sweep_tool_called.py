"""``tool_called`` takes the tool itself as well as its name, and refuses up front what
could never match (a blank or non-string name, arguments that are not a dict)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.evals import EvalCase, evaluate, tool_called
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    return "shipped"


def test_the_tool_itself_names_the_calls_to_count(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("lookup_order", order_id="1234"), reply("shipped")])
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    scorer = tool_called(lookup_order, arguments={"order_id": "1234"})
    result = evaluate(Worker(name="w", tools=[lookup_order]),
                      [EvalCase(input="Where is 1234?", scorers=[scorer])], desk=desk)  # fmt: skip
    [score] = result.cases[0].scores
    assert (score.name, score.passed) == ("tool_called:lookup_order", True)


@pytest.mark.parametrize(
    ("tool_arg", "options", "message"),
    [
        ("", {}, "tool must be a tool name or a Tool, not ''"),
        (None, {}, "tool must be a tool name or a Tool, not None"),
        ("lookup_order", {"arguments": "order_id=1234"}, "arguments must be a dict"),
    ],
)
def test_what_could_never_match_is_refused(
    tool_arg: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        tool_called(tool_arg, **options)
