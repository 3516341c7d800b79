"""Span names built from user-given names (a model's, an agent's, a block's) escape a lone
surrogate (``"\\ud800"``), as the attributes do: OTLP's protobuf refused the name and the
exporter dropped the whole batch of spans."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from deskwork import Desk, Job, Worker, otel
from deskwork.graph.observability import OpenTelemetryMiddleware
from deskwork.graph.testing import make_test_state
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


@pytest.fixture
def exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    yield provider, found
    provider.shutdown()


def test_a_model_name_with_a_lone_surrogate_gives_an_exportable_chat_span(exporter: Any) -> None:
    provider, found = exporter
    desk = Desk(
        model="scripted/cu\ud800t",
        adapter=ScriptedAdapter([reply("done")]),
        run_store=InMemoryRunStore(),
    )
    otel.instrument(desk, tracer_provider=provider)
    assert desk.run(Worker(name="w"), Job(input="go")).status == "completed"
    spans = found.get_finished_spans()
    assert "chat scripted/cu\\ud800t" in [s.name for s in spans]
    assert encode_spans(spans).SerializeToString()  # raised UnicodeEncodeError before


async def test_the_agent_span_of_the_graph_middleware_escapes_its_name(exporter: Any) -> None:
    provider, found = exporter
    middleware = OpenTelemetryMiddleware(tracer=provider.get_tracer("test"))
    state = make_test_state()
    await middleware.before_invoke("ag\udc80ent", state)
    await middleware.on_error("ag\udc80ent", state, ValueError("x"))
    [exported] = found.get_finished_spans()
    assert exported.name == "agent.invoke ag\\udc80ent"
    assert encode_spans([exported]).SerializeToString()


def test_a_blocks_span_escapes_its_name(exporter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, found = exporter
    monkeypatch.setattr(otel, "get_tracer", lambda name=otel.TRACER_NAME: provider.get_tracer(name))
    with otel.span("step \ud800"):
        pass
    [exported] = found.get_finished_spans()
    assert exported.name == "step \\ud800"
    assert encode_spans([exported]).SerializeToString()
