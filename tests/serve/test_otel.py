"""deskwork.otel: GenAI spans for runs, agents, model calls and tool calls (in-memory exporter)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from serve_support import SECRET, make_desk

from deskwork import otel
from deskwork.core.job import Job
from deskwork.runtime.worker import Worker
from deskwork.tools.base import tool


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _by_name(finished: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for item in finished:
        found.setdefault(item.name, []).append(item)
    return found


def _parent_id(item: ReadableSpan) -> int | None:
    return item.parent.span_id if item.parent is not None else None


def test_a_worker_run_makes_nested_genai_spans(spans: Any) -> None:
    provider, exporter = spans
    desk = make_desk()
    otel.instrument(desk, tracer_provider=provider)
    clerk = desk.get_runner("worker", "clerk")
    assert clerk is not None
    report = desk.run(clerk, Job(input=f"go {SECRET}"))
    assert report.status == "paused"
    desk.resume(report, True)
    named = _by_name(exporter.get_finished_spans())
    first_run, resumed_run = named["deskwork.run clerk"]
    assert first_run.attributes is not None and resumed_run.attributes is not None
    assert first_run.attributes["deskwork.status"] == "paused"
    assert resumed_run.attributes["deskwork.resumed"] is True
    assert resumed_run.attributes["deskwork.status"] == "completed"
    agents = named["invoke_agent clerk"]
    assert _parent_id(agents[0]) == first_run.context.span_id
    chats = named["chat scripted/test"]
    assert len(chats) == 3
    chat = chats[0]
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.system"] == "scripted"
    assert chat.attributes["gen_ai.request.model"] == "scripted/test"
    assert chat.attributes["gen_ai.response.model"] == "scripted/test"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 10
    assert _parent_id(chat) == agents[0].context.span_id
    lookup = named["execute_tool lookup"][0]
    assert lookup.attributes is not None
    assert lookup.attributes["gen_ai.tool.name"] == "lookup"
    assert lookup.attributes["gen_ai.operation.name"] == "execute_tool"
    assert _parent_id(lookup) == agents[0].context.span_id
    assert "execute_tool restock" in named  # the approved call, after the resume
    for item in exporter.get_finished_spans():  # no content unless opted in
        text = repr(dict(item.attributes or {})) + repr(item.events)
        assert SECRET not in text and "go " not in text and "done:" not in text
        assert item.start_time is not None and item.end_time is not None
        assert item.start_time <= item.end_time


def test_content_is_recorded_only_when_opted_in(spans: Any) -> None:
    provider, exporter = spans
    desk = make_desk()
    otel.instrument(desk, tracer_provider=provider, capture_content=True)
    echo = desk.get_runner("worker", "echo")
    assert echo is not None
    desk.run(echo, Job(input="hello"))
    agent = _by_name(exporter.get_finished_spans())["invoke_agent echo"][0]
    choices = [e for e in agent.events if e.name == "gen_ai.choice"]
    assert choices and choices[0].attributes is not None
    assert choices[0].attributes["gen_ai.completion"] == "echo: hello"


def test_child_runs_and_the_callers_span_nest(spans: Any) -> None:
    provider, exporter = spans
    desk = make_desk()
    echo = desk.get_runner("worker", "echo")
    assert echo is not None

    @tool(description="Ask the echo worker in a run of its own")
    async def lookup(item: str) -> str:
        child = await desk.arun(echo, Job(input=item))
        return child.content or ""

    parent_worker = Worker(name="parent", tools=[lookup], instructions="Delegate.")
    otel.instrument(desk, tracer_provider=provider)
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("request") as outer:
        report = desk.run(parent_worker, Job(input="x"))
    assert report.content == "done: echo: beans"
    named = _by_name(exporter.get_finished_spans())
    parent_run = named["deskwork.run parent"][0]
    child_run = named["deskwork.run echo"][0]
    assert _parent_id(parent_run) == outer.get_span_context().span_id
    assert _parent_id(child_run) == parent_run.context.span_id
    assert child_run.context.trace_id == parent_run.context.trace_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # nothing leaks after the run


def test_a_failing_tool_marks_its_span(spans: Any) -> None:
    provider, exporter = spans
    desk = make_desk()

    @tool(description="Always fails")
    def lookup(item: str) -> int:
        raise RuntimeError("no stock database")

    worker = Worker(name="broken", tools=[lookup], instructions="Try.")
    otel.instrument(desk, tracer_provider=provider)
    desk.run(worker, Job(input="x"))
    failed = _by_name(exporter.get_finished_spans())["execute_tool lookup"][0]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes is not None and "error.type" in failed.attributes


def test_without_opentelemetry_everything_is_a_no_op(
    monkeypatch: pytest.MonkeyPatch, spans: Any
) -> None:
    provider, exporter = spans
    monkeypatch.setattr(otel, "_trace", None)
    desk = make_desk()
    instrumentation = otel.instrument(desk, tracer_provider=provider)
    echo = desk.get_runner("worker", "echo")
    assert echo is not None
    assert desk.run(echo, Job(input="hi")).status == "completed"
    with otel.span("anything", key="value") as current:
        assert current is otel.NOOP_SPAN
    instrumentation.uninstrument()
    assert exporter.get_finished_spans() == ()


def test_uninstrument_stops_spans(spans: Any) -> None:
    provider, exporter = spans
    desk = make_desk()
    otel.instrument(desk, tracer_provider=provider).uninstrument()
    echo = desk.get_runner("worker", "echo")
    assert echo is not None
    desk.run(echo, Job(input="hi"))
    assert exporter.get_finished_spans() == ()
