"""A validator of a tool's arguments that raises something pydantic does not wrap (a
``TypeError``) fails that call with the tool's "invalid arguments" error the model sees,
like any bad argument; it failed the whole run."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def _even(value: int) -> int:
    if value % 2:
        raise TypeError(f"{value} is odd")
    return value


@tool()
def halve(n: Annotated[int, AfterValidator(_even)]) -> int:
    """Halve an even number."""
    return n // 2


def test_a_validators_type_error_fails_the_call_not_the_run() -> None:
    adapter = ScriptedAdapter([call_tool("halve", n=3), call_tool("halve", n=4), reply("2")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[halve]), Job(input="halve"))
    assert (report.status, report.content) == ("completed", "2"), report.errors
    first, second = (call.result for call in report.tool_calls)
    assert first is not None and first.error == (
        "invalid arguments for tool 'halve': TypeError: 3 is odd"
    )
    assert second is not None and (second.error, second.content) == (None, "2")
    assert "Error: invalid arguments" in adapter.calls[1]["messages"][-1]["content"]


@tool()
def greet(name: Annotated[str, Field(description="who to greet", min_length=1)]) -> str:
    """Greet someone."""
    return f"hello {name}"


def test_annotated_field_metadata_reaches_the_tools_schema() -> None:
    """``get_type_hints`` without ``include_extras`` dropped it: no description, no check."""
    schema = greet.input_model.model_json_schema()
    assert schema["properties"]["name"]["description"] == "who to greet"
    assert schema["properties"]["name"]["minLength"] == 1
