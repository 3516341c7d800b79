"""The scripted model hands a tool call's arguments over as a provider would: what their JSON
text parses back to (a plain dict skips the text, and must give the same call)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from deskwork.adapters.base import parse_tool_call
from deskwork.testing import ScriptedAdapter, call_tool, call_tools


def _via_text(arguments: dict[Any, Any]) -> Any:
    return parse_tool_call("call_0", "t", json.dumps(arguments))


ARGUMENTS: list[dict[Any, Any]] = [
    {},
    {"a": 2, "b": 3},
    {"text": "caf\u00e9", "flag": True, "none": None, "ratio": 0.1, "big": 2**70},
    {"inf": math.inf},
    {"nested": {"x": [1, (2, 3)]}},
    {"tuple": (1, 2)},
    {1: "int key"},
    {"nan": math.nan},
]


@pytest.mark.parametrize("arguments", ARGUMENTS)
async def test_a_scripted_call_carries_what_the_json_text_parses_to(
    arguments: dict[Any, Any],
) -> None:
    adapter = ScriptedAdapter([call_tool("t", **{str(k): v for k, v in arguments.items()})])
    if any(not isinstance(k, str) for k in arguments):  # call_tool takes text keys only
        adapter = ScriptedAdapter([call_tools(("t", arguments))])
    response = await adapter.acomplete(
        model="m", messages=[], tools=None, tool_choice=None, temperature=None,
        max_tokens=None, stream=False, stream_options=None,
    )  # fmt: skip
    (call,) = response.tool_calls
    expected = _via_text(arguments)
    if "nan" in arguments:  # nan != nan: compare the rest
        assert math.isnan(call.arguments["nan"]) and call.error is None
        return
    assert call == expected
    assert [type(v) for v in call.arguments.values()] == [
        type(v) for v in expected.arguments.values()
    ]
    assert call.arguments is not arguments  # the script's dict is not shared with the run
