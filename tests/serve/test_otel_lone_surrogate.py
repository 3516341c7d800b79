"""deskwork.otel: a run whose texts hold a lone surrogate (``"\\ud800"``, which the stores
keep) makes spans an OTLP exporter can send: the texts escaped (``\\ud800``), where
protobuf's UTF-8 refused them and the exporter dropped the whole batch of spans. Ordinary
non-ASCII text goes out as it is."""

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
from opentelemetry.trace import StatusCode

from deskwork import Desk, Job, Worker, otel
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools.base import tool

CUT = "fin\ud800al"
PLAIN = "café 😀 中文"


@tool(description="Give back a text")
def give(text: str) -> str:
    return "res\udc80ult"


@tool(description="Always fails")
def jam(text: str) -> str:
    raise RuntimeError("bro\ud800ken")


@pytest.fixture
def exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    yield provider, found
    provider.shutdown()


def _attributes(spans: Any) -> list[Any]:
    values: list[Any] = []
    for item in spans:
        values += (item.attributes or {}).values()
        for event in item.events:
            values += (event.attributes or {}).values()
    return values


def test_the_spans_of_a_run_with_a_lone_surrogate_can_be_exported(exporter: Any) -> None:
    provider, found = exporter
    turns = [call_tool("give", text="x"), call_tool("jam", text="x"), reply(CUT), reply(PLAIN)]
    desk = Desk(model="scripted/test", adapter=ScriptedAdapter(turns), run_store=InMemoryRunStore())
    otel.instrument(desk, tracer_provider=provider, capture_content=True)
    report = desk.run(Worker(name="w", tools=[give, jam], instructions="Go."), Job(input="go"))
    assert report.status == "completed" and report.content == CUT
    assert desk.run(Worker(name="p", instructions="Say."), Job(input="hi")).content == PLAIN

    spans = found.get_finished_spans()
    assert encode_spans(spans).SerializeToString()  # raised UnicodeEncodeError before
    values = _attributes(spans)
    assert "fin\\ud800al" in values and "res\\udc80ult" in values and PLAIN in values
    failed = next(s for s in spans if s.name == "execute_tool jam")
    assert failed.status.status_code is StatusCode.ERROR
    assert "bro\\ud800ken" in (failed.status.description or "")
