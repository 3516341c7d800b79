"""Structured output (models, TypeAdapters, retries, tools first) and streaming."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter

from deskwork import Desk, Job, Worker
from deskwork.adapters.base import ModelResponse
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply, structured
from deskwork.tools import tool

MODEL = "scripted/model"


class Result(BaseModel):
    title: str
    score: float


def _desk(*turns: Any, **kwargs: Any) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    return Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), **kwargs), adapter


def _tokens(report: Any) -> list[tuple[str, str]]:
    return [
        (e.payload["type"], e.payload["token"]) for e in report.events if e.type == "stream.token"
    ]


# --------------------------------------------------------------------------- structured


def test_pydantic_schema_gives_validated_data_and_json_content() -> None:
    desk, adapter = _desk(structured({"title": "t", "score": 0.5}))
    report = desk.run(Worker(name="Judge"), Job(input="Score this", response_schema=Result))
    assert report.status == "completed"
    assert report.data == Result(title="t", score=0.5)
    assert json.loads(report.content or "") == {"title": "t", "score": 0.5}
    request = adapter.calls[0]
    assert request["tools"] is None and request["stream"] is False
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Result"
    assert fmt["json_schema"]["schema"]["required"] == ["title", "score"]
    stored = desk.run_store.get_run(report.run_id)
    assert stored is not None and stored.output_json == {"title": "t", "score": 0.5}


def test_typeadapter_list_of_models_is_a_json_array() -> None:
    desk, _ = _desk(structured([{"title": "a", "score": 1}, {"title": "b", "score": 2}]))
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=TypeAdapter(list[Result])))
    assert report.data == [Result(title="a", score=1), Result(title="b", score=2)]
    assert json.loads(report.content or "") == [
        {"title": "a", "score": 1.0},
        {"title": "b", "score": 2.0},
    ]


def test_invalid_then_valid_output_retries_with_the_error() -> None:
    desk, adapter = _desk(reply("not json"), structured({"title": "t", "score": 1}))
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Result))
    assert report.status == "completed" and report.data == Result(title="t", score=1)
    assert len(adapter.calls) == 2
    retry_prompt = adapter.calls[1]["messages"][-1]
    assert retry_prompt["role"] == "user" and "did not match" in retry_prompt["content"]
    assert report.metrics["llm_calls"] == 1  # one structured call from the worker's view


def test_structured_retries_add_up_cost_like_usage() -> None:
    desk, _ = _desk(
        Turn(content="not json", usage={"total_tokens": 5}, cost=0.25),
        Turn(content='{"title": "t", "score": 1}', usage={"total_tokens": 7}, cost=0.5),
    )
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Result))
    assert report.status == "completed"
    assert report.metrics["total_tokens"] == 12
    assert report.metrics["cost"] == 0.75  # both calls were paid for


def test_invalid_output_after_retries_fails_and_retries_are_clamped_to_three() -> None:
    for configured, expected_attempts in ((0, 4), (1, 4), (5, 6)):
        adapter = ScriptedAdapter(default=reply('{"title": "missing score"}'))
        desk = Desk(
            model=MODEL,
            adapter=adapter,
            run_store=InMemoryRunStore(),
            structured_output_retries=configured,
        )
        report = desk.run(Worker(name="w"), Job(input="x", response_schema=Result))
        assert report.status == "failed", configured
        assert len(adapter.calls) == expected_attempts, configured
        assert "structured output failed" in report.errors[0]
        types = [e.type for e in report.events]
        assert "llm.failed" in types and types[-2:] == ["worker.failed", "run.failed"]


def test_structured_with_tools_runs_tools_first() -> None:
    @tool()
    def lookup(q: str) -> str:
        return "score is 0.9"

    desk, adapter = _desk(
        call_tool("lookup", q="x"),
        reply("I have what I need"),
        structured({"title": "x", "score": 0.9}),
    )
    report = desk.run(Worker(name="w", tools=[lookup]), Job(input="x", response_schema=Result))
    assert report.status == "completed" and report.data == Result(title="x", score=0.9)
    assert [bool(c["tools"]) for c in adapter.calls] == [True, True, False]
    assert "response_format" in adapter.calls[2]
    assert any(
        m["role"] == "tool" and m["content"] == "score is 0.9" for m in adapter.calls[2]["messages"]
    )


def test_adapter_structured_hook_is_used_for_schema_jobs() -> None:
    class HookAdapter(ScriptedAdapter):
        hook_calls = 0

        async def astructured_complete(self, **kwargs: Any) -> ModelResponse:
            HookAdapter.hook_calls += 1
            return ModelResponse(content="ignored", parsed=Result(title="hook", score=1))

    adapter = HookAdapter()
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Result))
    assert HookAdapter.hook_calls == 1 and adapter.calls == []
    assert report.data == Result(title="hook", score=1)


# --------------------------------------------------------------------------- streaming


def test_streaming_emits_content_tokens_in_report_events() -> None:
    desk, adapter = _desk(reply("Hello streaming world"))
    report = desk.run(Worker(name="w"), Job(input="hi"), stream=True)
    assert report.content == "Hello streaming world"
    assert _tokens(report) == [
        ("content", "Hello"),
        ("content", " streaming"),
        ("content", " world"),
    ]
    assert adapter.calls[0]["stream"] is True


def test_streaming_tool_turns_emit_tool_argument_deltas() -> None:
    @tool()
    def write(path: str) -> str:
        return "written"

    desk, _ = _desk(call_tool("write", path="notes.txt"), reply("done"))
    report = desk.run(Worker(name="w", tools=[write]), Job(input="go"), stream=True)
    assert report.status == "completed"
    tokens = _tokens(report)
    arg_text = "".join(t for kind, t in tokens if kind == "tool_argument")
    assert json.loads(arg_text) == {"path": "notes.txt"}
    assert ("content", "done") in tokens
    assert report.tool_calls[0].arguments == {"path": "notes.txt"}


def test_streaming_reasoning_is_collected() -> None:
    desk, _ = _desk(reply("answer", reasoning="step by step"))
    report = desk.run(Worker(name="w"), Job(input="q"), stream=True)
    assert report.reasoning_content == "step by step"


def test_desk_stream_setting_and_per_run_override() -> None:
    desk, adapter = _desk(reply("a b"), reply("c d"), stream=True)
    streamed = desk.run(Worker(name="w"), Job(input="q"))
    plain = desk.run(Worker(name="w"), Job(input="q"), stream=False)
    assert _tokens(streamed) and not _tokens(plain)
    assert [c["stream"] for c in adapter.calls] == [True, False]


def test_schema_jobs_do_not_stream_by_default() -> None:
    desk, adapter = _desk(structured({"title": "t", "score": 1}))
    report = desk.run(Worker(name="w"), Job(input="q", response_schema=Result), stream=True)
    assert report.data == Result(title="t", score=1)
    assert _tokens(report) == [] and adapter.calls[0]["stream"] is False


def test_preview_mode_streams_a_valid_preview() -> None:
    payload = '{"title": "preview", "score": 2}'
    desk, adapter = _desk(Turn(content=payload), structured_stream_mode="preview")
    report = desk.run(Worker(name="w"), Job(input="q", response_schema=Result), stream=True)
    assert report.status == "completed" and report.data == Result(title="preview", score=2)
    assert len(adapter.calls) == 1 and adapter.calls[0]["stream"] is True
    assert "".join(t for _, t in _tokens(report)) == payload


def test_preview_mode_invalid_preview_falls_back_to_strict() -> None:
    desk, adapter = _desk(
        reply("this is not JSON at all"), structured({"title": "strict", "score": 3})
    )
    job = Job(input="q", response_schema=Result, structured_stream_mode="preview")
    report = desk.run(Worker(name="w"), job, stream=True)
    assert report.status == "completed" and report.data == Result(title="strict", score=3)
    assert [c["stream"] for c in adapter.calls] == [True, False]
    assert "response_format" in adapter.calls[1]
    assert _tokens(report)  # preview tokens were streamed before the fallback


def test_job_preview_mode_needs_streaming() -> None:
    desk, adapter = _desk(structured({"title": "t", "score": 1}))
    job = Job(input="q", response_schema=Result, structured_stream_mode="preview")
    report = desk.run(Worker(name="w"), job)  # stream off: strict only
    assert report.data == Result(title="t", score=1) and adapter.calls[0]["stream"] is False
