"""Plain data types: Job, Report, Message, ToolCall, ToolResult, redaction, stream assembly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from deskwork import (
    Brief,
    ConfigurationError,
    Job,
    Message,
    PendingAction,
    Report,
    RunOutput,
    RunState,
    ToolCall,
)
from deskwork.adapters.base import (
    StreamChunk,
    ToolCallDelta,
    assemble_stream,
    parse_structured,
    parse_tool_call,
)
from deskwork.core.redact import REDACTED, redact, redact_text
from deskwork.tools import ToolResult


class Out(BaseModel):
    answer: int


def test_job_is_immutable_and_has_unique_ids() -> None:
    job = Job(input="x")
    with pytest.raises(ValidationError):
        job.input = "y"
    assert Job(input="x").id != job.id
    assert Brief is Job and RunOutput is Report


def test_job_state_round_trip_keeps_fields_and_schema_path() -> None:
    job = Job(
        input={"q": 1},
        expected_output="e",
        constraints=["a", "b"],
        metadata={"k": "v"},
        response_schema=Out,
        tools_override=["search"],
        initial_messages=[Message(role="user", content="earlier")],
        thinking={"type": "enabled"},
        structured_stream_mode="preview",
        drop_params=True,
        extra_body={"x": 1},
    )
    data = json.loads(json.dumps(job.to_state()))
    assert data["response_schema"] == f"{__name__}:Out"
    restored = Job.from_state(data)
    assert restored.response_schema is Out
    assert restored.model_dump(exclude={"response_schema"}) == job.model_dump(
        exclude={"response_schema"}
    )


class _When(BaseModel):
    at: datetime
    count: float


def test_job_state_is_json_of_its_own_whatever_the_input() -> None:
    """The stored form of a job: the fields in order (schema and tool names last), JSON's own
    values copied (nothing shared with the job), other values as ``to_jsonable`` of their
    Python dump (a model's datetime as ``isoformat()``, a tuple as a list, a key as text)."""
    plain = Job(input={"q": [1, {"r": 2.5}]}, metadata={"k": ["v"]}, constraints=["a"])
    state = plain.to_state()
    assert list(state) == [*(n for n in Job.model_fields if n not in _OWN_FORM), *_OWN_FORM]
    assert state["input"] == {"q": [1, {"r": 2.5}]} and state["metadata"] == {"k": ["v"]}
    plain.metadata["k"].append("later")
    plain.input["q"].append(3)
    assert state["metadata"] == {"k": ["v"]} and state["input"] == {"q": [1, {"r": 2.5}]}
    when = datetime(2024, 1, 2, tzinfo=UTC)
    state = Job(input=_When(at=when, count=1.5)).to_state()
    assert state["input"] == {"at": "2024-01-02T00:00:00+00:00", "count": 1.5}
    assert Job(input={1: (2, 3)}).to_state()["input"] == {"1": [2, 3]}


_OWN_FORM = ("response_schema", "tools_override")


def test_job_state_with_unimportable_schema_is_refused() -> None:
    """The job came back without its schema, and its run went on unvalidated (data=None)."""
    data = Job(input="x").to_state()
    data["response_schema"] = "no.such.module:Thing"
    with pytest.raises(ConfigurationError, match=r"no\.such\.module:Thing cannot be loaded"):
        Job.from_state(data)


def test_message_to_provider_renders_tool_fields() -> None:
    call = ToolCall(id="c1", name="t", arguments={"a": 1})
    assistant = Message(role="assistant", content=None, tool_calls=[call], reasoning_content="r")
    rendered = assistant.to_provider()
    assert rendered["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": '{"a": 1}'}}
    ]
    assert rendered["reasoning_content"] == "r"
    tool_msg = Message(role="tool", content="ok", tool_call_id="c1", name="t").to_provider()
    assert tool_msg == {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "t"}
    assert "name" not in Message(role="user", content="hi", name="bob").to_provider()


def test_malformed_tool_call_keeps_raw_text_and_error() -> None:
    call = parse_tool_call("c1", "t", '{"a": ')
    assert call.error is not None and "malformed" in call.error
    assert call.raw_arguments == '{"a": '
    assert call.arguments == {}
    assert call.to_provider()["function"]["arguments"] == '{"a": '
    not_object = parse_tool_call("c2", "t", "[1, 2]")
    assert not_object.error == "tool arguments must be a JSON object"
    assert parse_tool_call("c3", "t", "").arguments == {}
    assert parse_tool_call("c4", "t", {"x": 1}).arguments == {"x": 1}


def test_tool_result_model_text() -> None:
    assert ToolResult(error="bad", content="ignored").model_text() == "Error: bad"
    assert ToolResult(content="text", data={"a": 1}).model_text() == "text"
    assert ToolResult(data={"a": 1}).model_text() == '{"a": 1}'
    assert ToolResult().model_text() == ""
    exc = ValueError("x")
    result = ToolResult(error="x", original_exception=exc)
    assert result.original_exception is exc
    assert "original_exception" not in result.model_dump()


def test_pending_action_and_run_state_round_trip_through_json() -> None:
    call = ToolCall(id="c", name="t", arguments={"x": 1}, result=ToolResult(content="r"))
    action = PendingAction(
        action_id="a",
        type="confirmation",
        tool_call=call,
        prompt="ok?",
        options=["approve", "decline"],
    )
    state = RunState(
        run_id="r",
        status="paused",
        runner_type="worker",
        runner_name="w",
        job={"input": "x"},
        messages=[Message(role="assistant", tool_calls=[call])],
        tool_calls=[call],
        pending_action=action,
        payload={"k": [1]},
    )
    assert RunState.model_validate_json(state.model_dump_json()) == state


@dataclass
class _Progress:
    step: int


def test_run_state_takes_a_job_and_a_typed_payload_as_their_stored_dicts() -> None:
    job = Job(input="x", metadata={"k": 1})
    state = RunState(run_id="r", status="paused", runner_type="worker", runner_name="w",
                     job=job, payload=_Progress(step=2))  # fmt: skip
    assert state.job == job.to_state() and state.payload == {"step": 2}
    read = RunState.model_validate_json(state.model_dump_json())  # a store's read
    assert read == state and read.job == job.to_state()
    not_a_dict = state.model_dump_json().replace('"payload":{"step":2}', '"payload":[2]')
    with pytest.raises(ValidationError, match="payload"):
        RunState.model_validate_json(not_a_dict)


def test_redact_keys_and_values() -> None:
    data = {
        "api_key": "plain-value",
        "OPENAI_API_KEY": "x",
        "headers": {"Authorization": "Bearer abcdef123456"},
        "note": "token sk-abcdefghijklmnop and Bearer zyxwvu987654 here",
        "list": ["sk-ant-abcdefghijkl", 3],
        "safe": "hello",
    }
    out = redact(data)
    assert out["api_key"] == REDACTED and out["OPENAI_API_KEY"] == REDACTED
    assert out["headers"]["Authorization"] == REDACTED
    assert "sk-abcdefghijklmnop" not in out["note"] and "zyxwvu987654" not in out["note"]
    assert out["list"] == [REDACTED, 3]
    assert out["safe"] == "hello"
    assert redact_text("nothing secret") == "nothing secret"


def test_assemble_stream_merges_content_reasoning_and_tool_deltas() -> None:
    chunks = [
        StreamChunk(reasoning="think "),
        StreamChunk(reasoning="more"),
        StreamChunk(content="Hel"),
        StreamChunk(content="lo"),
        StreamChunk(tool_calls=[ToolCallDelta(1, "b", "second", '{"y"')]),
        StreamChunk(tool_calls=[ToolCallDelta(0, "a", "first", '{"x": ')]),
        StreamChunk(tool_calls=[ToolCallDelta(0, arguments="1}")]),
        StreamChunk(tool_calls=[ToolCallDelta(1, arguments=": 2}")]),
        StreamChunk(finish_reason="tool_calls", usage={"total_tokens": 9}),
    ]
    response = assemble_stream(chunks, model="m")
    assert response.content == "Hello" and response.reasoning_content == "think more"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("a", "first", {"x": 1}),
        ("b", "second", {"y": 2}),
    ]
    assert response.usage == {"total_tokens": 9} and response.finish_reason == "tool_calls"


def test_parse_structured_tolerates_code_fences() -> None:
    assert parse_structured('```json\n{"answer": 3}\n```', Out) == Out(answer=3)
    with pytest.raises(ValueError):
        parse_structured(None, Out)
    with pytest.raises(ValidationError):
        parse_structured('{"answer": "x"}', Out)
