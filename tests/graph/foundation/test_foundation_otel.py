"""deskwork.graph.observability.otel: real spans with OpenTelemetry, no-ops without it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from deskwork.graph.observability import otel
from deskwork.graph.observability.otel import (
    OTEL_AVAILABLE,
    get_tracer,
    otel_span,
    sync_otel_span,
)

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def _exporter() -> InMemorySpanExporter:
    """One exporter attached once to the process's SDK provider (processors cannot be removed)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    if not getattr(provider, "_deskwork_foundation_exporter", False):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider._deskwork_foundation_exporter = True  # type: ignore[attr-defined]
    return _EXPORTER


@pytest.fixture
def spans(_exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    _exporter.clear()
    yield _exporter
    _exporter.clear()


def test_otel_is_available_here() -> None:
    assert OTEL_AVAILABLE is True


async def test_async_span_with_attribute_dict(spans: InMemorySpanExporter) -> None:
    async with otel_span("my_operation", attributes={"key": "value", "n": 2}) as span:
        span.set_attribute("later", True)
    (finished,) = spans.get_finished_spans()
    assert finished.name == "my_operation"
    assert dict(finished.attributes or {}) == {"key": "value", "n": 2, "later": True}


def test_sync_span_with_keyword_attributes_nested(spans: InMemorySpanExporter) -> None:
    with (
        sync_otel_span("outer", agent_name="supervisor"),
        sync_otel_span("react_pass", agent_name="supervisor", pass_num=1),
    ):
        pass
    inner, outer = spans.get_finished_spans()
    assert inner.name == "react_pass"
    assert dict(inner.attributes or {}) == {"agent_name": "supervisor", "pass_num": 1}
    assert inner.parent is not None
    assert inner.parent.span_id == outer.context.span_id


def test_attributes_are_cleaned_and_redacted(spans: InMemorySpanExporter) -> None:
    with sync_otel_span(
        "call",
        skipped=None,
        header="Bearer abcdefghijklmnop",
        tags=["a", "b"],
        obj={"nested": 1},
    ):
        pass
    attributes = dict(spans.get_finished_spans()[0].attributes or {})
    assert "skipped" not in attributes
    assert "abcdefghijklmnop" not in str(attributes["header"])
    assert attributes["tags"] == ("a", "b")
    assert attributes["obj"] == "{'nested': 1}"


async def test_exceptions_are_recorded_and_propagate(spans: InMemorySpanExporter) -> None:
    with pytest.raises(ValueError, match="boom"):
        async with otel_span("failing"):
            raise ValueError("boom")
    (finished,) = spans.get_finished_spans()
    assert finished.status.status_code is StatusCode.ERROR
    assert finished.events[0].name == "exception"


def test_get_tracer_default_name(spans: InMemorySpanExporter) -> None:
    with get_tracer().start_as_current_span("direct"):
        pass
    scope = spans.get_finished_spans()[0].instrumentation_scope
    assert scope is not None
    assert scope.name == "deskwork.graph"


class TestWithoutOpenTelemetry:
    @pytest.fixture(autouse=True)
    def _no_otel(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(otel, "_trace", None)

    async def test_spans_are_shared_no_ops(self, spans: InMemorySpanExporter) -> None:
        async with otel_span("x", attributes={"a": 1}) as first:
            first.set_attribute("b", 2)
            first.add_event("e")
            first.record_exception(ValueError())
            assert first.is_recording() is False
        with sync_otel_span("y", a=1) as second:
            second.set_status("ERROR")
        assert first is second
        assert spans.get_finished_spans() == ()

    def test_tracer_is_a_no_op(self) -> None:
        tracer = get_tracer()
        with tracer.start_as_current_span("z") as span:
            span.set_attributes({"a": 1})
            span.end()
        assert tracer.start_span("w") is span

    async def test_exceptions_still_propagate(self) -> None:
        with pytest.raises(KeyError):
            async with otel_span("x"):
                raise KeyError("k")
