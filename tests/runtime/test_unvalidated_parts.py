"""A run's own values built without validation (tool calls parsed from a reply, the scripted
model's replies, a tool's result) are the models validation would build: equal, with the same
fields set and the same stored JSON text (field order), in containers of their own; parts of
any other type still go through validation, which refuses or coerces them as before."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork.adapters.base import ModelResponse, parse_tool_call
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool
from deskwork.tools.execution import tool_result_from_value


def _same(built: Any, validated: Any) -> None:
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("raw", [{"a": 2, "b": [1, {"c": None}]}, '{"a": 2, "b": "x"}', {}])
def test_a_parsed_tool_call_is_the_validated_one(raw: dict[str, Any] | str) -> None:
    arguments = raw if isinstance(raw, dict) else {"a": 2, "b": "x"}
    call = parse_tool_call("call_1", "add", raw)
    _same(call, ToolCall(id="call_1", name="add", arguments=arguments))
    assert call.arguments is not raw  # the caller's dict is not shared with the run


@pytest.mark.parametrize(
    ("call_id", "arguments"), [("call_1", {1: "int key"}), (None, {"a": 1}), (7, {"a": 1})]
)
def test_a_tool_call_of_other_types_is_still_refused(call_id: Any, arguments: Any) -> None:
    with pytest.raises(ValidationError):
        parse_tool_call(call_id, "add", arguments)


async def _answer(turn: Turn) -> ModelResponse:
    adapter = ScriptedAdapter([turn])
    response = await adapter.acomplete(
        model="m", messages=[], tools=None, tool_choice=None, temperature=None,
        max_tokens=None, stream=False, stream_options=None,
    )  # fmt: skip
    assert isinstance(response, ModelResponse)
    return response


@pytest.mark.parametrize("turn", [reply("The sum is 5.", reasoning="r"), call_tool("add", a=2)])
async def test_a_scripted_reply_is_the_validated_response(turn: Turn) -> None:
    response = await _answer(turn)
    calls = [ToolCall(id="call_0", name="add", arguments={"a": 2})] if turn.tool_calls else []
    completion = len((turn.content or "").split()) + 8 * len(calls)
    expected = ModelResponse(
        content=turn.content,
        reasoning_content=turn.reasoning,
        tool_calls=calls,
        usage={"prompt_tokens": 10, "completion_tokens": completion,
               "total_tokens": 10 + completion},
        cost=None,
        model="m",
        finish_reason="tool_calls" if calls else "stop",
    )  # fmt: skip
    _same(response, expected)


async def test_a_scripted_turn_of_other_types_is_still_validated() -> None:
    coerced = await _answer(Turn(content="hi", usage={"prompt_tokens": "3"}, cost=1))  # type: ignore[dict-item]
    assert coerced.usage == {"prompt_tokens": 3} and type(coerced.cost) is float
    with pytest.raises(ValidationError):
        await _answer(Turn(content="hi", reasoning=123))  # type: ignore[arg-type]


@dataclasses.dataclass
class Point:
    x: int
    y: int


@tool
def plain() -> None:
    """A tool whose results are given to tool_result_from_value."""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, ToolResult(content="5", data=5)),
        ({"a": [1, 2]}, ToolResult(content='{"a": [1, 2]}', data={"a": [1, 2]})),
        (Point(1, 2), ToolResult(content='{"x": 1, "y": 2}', data={"x": 1, "y": 2})),
        (None, ToolResult(content="")),
        ("text", ToolResult(content="text")),
    ],
)
def test_a_tool_result_is_the_validated_one(value: Any, expected: ToolResult) -> None:
    _same(tool_result_from_value(plain, value), expected)
