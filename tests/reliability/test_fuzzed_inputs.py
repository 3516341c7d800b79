"""Hypothesis-generated tool arguments and model outputs against the tool-call parser,
tool execution and the structured-output path: nothing raises, every outcome is defined."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from deskwork import Desk, Job, ToolCall, Worker
from deskwork.adapters.base import (
    StreamChunk,
    ToolCallDelta,
    assemble_stream,
    parse_structured,
    parse_tool_call,
)
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool

pytestmark = pytest.mark.reliability

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RUNS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=20),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
# what a model may send as arguments: JSON objects, other JSON, and text that is not JSON
raw_arguments = (
    json_objects.map(json.dumps)
    | json_values.map(json.dumps)
    | st.text(max_size=60)
    | json_objects.map(lambda d: json.dumps(d)[:-1])  # truncated mid-stream
)


@FUZZ
@given(raw=raw_arguments)
def test_the_tool_call_parser_never_raises(raw: str) -> None:
    call = parse_tool_call("c1", "t", raw)
    if call.error is None:
        assert isinstance(call.arguments, dict)
        assert call.arguments == json.loads(raw.strip() or "{}")
    else:
        assert call.raw_arguments == raw and call.arguments == {}
        assert call.error.startswith(("malformed tool arguments", "tool arguments must be"))
    json.loads(call.model_dump_json())  # a parsed call always stores


@FUZZ
@given(arguments=json_objects, cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_streamed_arguments_split_anywhere_parse_like_one_piece(
    arguments: dict[str, Any], cuts: list[int]
) -> None:
    text = json.dumps(arguments)
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    chunks = [StreamChunk(tool_calls=[ToolCallDelta(index=0, id="c", name="t")])]
    chunks += [StreamChunk(tool_calls=[ToolCallDelta(index=0, arguments=p)]) for p in pieces]
    response = assemble_stream(chunks)
    assert [(c.name, c.arguments, c.error) for c in response.tool_calls] == [("t", arguments, None)]


@tool()
def scale(x: int, factor: float = 2.0, label: str = "") -> str:
    """Scale x by factor."""
    return f"{label}{x * factor}"


@FUZZ
@given(
    arguments=json_objects
    | st.fixed_dictionaries({"x": json_values}, optional={"factor": json_values})
)
def test_any_tool_arguments_give_a_result_or_a_clear_error(arguments: dict[str, Any]) -> None:
    result = asyncio.run(aexecute_tool(scale, ToolCall(id="c", name="scale", arguments=arguments)))
    try:
        expected = scale.input_model.model_validate(arguments)
    except ValidationError:
        assert result.error is not None and result.content is None
        assert result.exception_type == "ToolValidationError"
    else:
        assert result.error is None, result.error
        assert result.content == f"{expected.label}{expected.x * expected.factor}"  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / ".deskwork"


class Verdict(BaseModel):
    ok: bool
    score: int


model_outputs = (
    st.builds(Verdict).map(lambda v: v.model_dump_json())
    | st.builds(Verdict).map(lambda v: f"```json\n{v.model_dump_json()}\n```")
    | json_values.map(json.dumps)
    | st.text(max_size=60)
)


@FUZZ
@given(text=model_outputs)
def test_structured_parsing_returns_a_valid_model_or_a_value_error(text: str) -> None:
    try:
        parsed = parse_structured(text, Verdict)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return
    assert isinstance(parsed, Verdict)


@RUNS
@given(text=model_outputs)
def test_a_structured_run_on_any_model_output_completes_or_fails_cleanly(
    storage: Path, text: str
) -> None:
    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=reply(text)),
                run_store=InMemoryRunStore(), structured_output_retries=1,
                storage_dir=storage)  # fmt: skip
    report = desk.run(Worker(name="judge"), Job(input="judge", response_schema=Verdict))
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == report.status
    if report.status == "completed":
        assert isinstance(report.data, Verdict)
        assert report.data == Verdict.model_validate_json(
            text.strip().strip("`").removeprefix("json")
        )
    else:
        assert report.status == "failed" and report.errors


@pytest.mark.parametrize(
    "text", ['{"ok": true, "score": 3}', '```json\n{"ok": true, "score": 3}\n```']
)
def test_the_generated_valid_outputs_do_complete(storage: Path, text: str) -> None:
    """The completed branch above is reached: valid (and fenced) output gives the data."""
    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=reply(text)),
                run_store=InMemoryRunStore(), storage_dir=storage)  # fmt: skip
    report = desk.run(Worker(name="judge"), Job(input="judge", response_schema=Verdict))
    assert (report.status, report.data) == ("completed", Verdict(ok=True, score=3))
