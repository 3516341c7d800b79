"""deskwork.otel.span (and the graph layer's sync_otel_span, which the ReAct passes use): an
exception leaving the block is recorded on the span redacted. OpenTelemetry's own recording
put the message and the stacktrace on the exported span as they were, so a provider's
``401 for key sk-...`` reached the exporter; a lone surrogate in a message made the OTLP
encoder raise and the exporter drop the whole batch. The exception itself goes on to the
caller unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from deskwork import otel
from deskwork.core.redact import describe_exception, exception_text
from deskwork.graph.observability.otel import sync_otel_span

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.payload.signature"
PASSWORD = "hunter2-correct-horse"
SECRETS = (KEY, TOKEN, PASSWORD)
MESSAGE = f"401 for key {KEY}; Authorization: Bearer {TOKEN}; api_key={PASSWORD}"

SPANS: list[Callable[[str], AbstractContextManager[Any]]] = [
    lambda name: otel.span(name),
    lambda name: sync_otel_span(name),
]


class ProviderError(RuntimeError):
    """An error of a model provider quoting the request's credentials."""


@pytest.fixture
def exported(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    monkeypatch.setattr(otel, "get_tracer", lambda name=otel.TRACER_NAME: provider.get_tracer(name))
    yield found
    provider.shutdown()


def _texts(spans: Any) -> str:
    """Every text of the spans an exporter would send."""
    parts: list[str] = []
    for item in spans:
        parts.append(item.status.description or "")
        parts += [str(v) for v in (item.attributes or {}).values()]
        for event in item.events:
            parts += [str(v) for v in (event.attributes or {}).values()]
    return "\n".join(parts)


@pytest.mark.parametrize("open_span", SPANS, ids=["otel.span", "sync_otel_span"])
def test_an_exception_is_recorded_without_its_secrets(
    exported: InMemorySpanExporter, open_span: Callable[[str], AbstractContextManager[Any]]
) -> None:
    error = ProviderError(MESSAGE)
    with pytest.raises(ProviderError) as raised, open_span("call"):
        raise error
    assert raised.value is error and str(raised.value) == MESSAGE  # the caller's, unchanged

    [span] = exported.get_finished_spans()
    texts = _texts([span])
    assert not [secret for secret in SECRETS if secret in texts]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.status.description or "").startswith("ProviderError: 401 for key <redacted>")
    [event] = span.events
    attributes = dict(event.attributes or {})
    assert event.name == "exception"
    assert attributes["exception.type"] == f"{__name__}.ProviderError"
    assert str(attributes["exception.message"]).startswith("401 for key <redacted>")
    stacktrace = str(attributes["exception.stacktrace"])
    assert stacktrace.startswith("Traceback")
    assert "ProviderError: 401 for key <redacted>" in stacktrace


def test_the_cause_of_an_exception_is_redacted_in_the_stacktrace(
    exported: InMemorySpanExporter,
) -> None:
    with pytest.raises(ValueError), otel.span("call"):
        try:
            raise ProviderError(MESSAGE)
        except ProviderError as cause:
            raise ValueError("the model call failed") from cause
    [span] = exported.get_finished_spans()
    stacktrace = str(dict(span.events[0].attributes or {})["exception.stacktrace"])
    assert "the model call failed" in stacktrace and "401 for key <redacted>" in stacktrace
    assert not [secret for secret in SECRETS if secret in _texts([span])]


def test_a_lone_surrogate_in_an_exception_can_be_exported(exported: InMemorySpanExporter) -> None:
    with pytest.raises(RuntimeError), otel.span("call"):
        raise RuntimeError("bro\ud800ken")
    spans = exported.get_finished_spans()
    assert encode_spans(spans).SerializeToString()  # raised UnicodeEncodeError before
    [span] = spans
    assert span.status.description == "RuntimeError: bro\\ud800ken"
    assert dict(span.events[0].attributes or {})["exception.message"] == "bro\\ud800ken"


def test_a_cancelled_block_is_not_recorded_as_an_error(exported: InMemorySpanExporter) -> None:
    with pytest.raises(asyncio.CancelledError), otel.span("call"):
        raise asyncio.CancelledError
    [span] = exported.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET and not span.events


class Unreadable(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("no message")


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (Unreadable(), "Unreadable: <the Unreadable's message could not be read>"),
        (RuntimeError(), "RuntimeError"),
    ],
    ids=["unreadable", "empty"],
)
def test_an_exception_reads_on_the_span_as_in_the_report(
    exported: InMemorySpanExporter, error: Exception, status: str
) -> None:
    # the span's status is describe_exception's text, as a run's errors and events show it
    # (it was "Unreadable: <exception str() failed>" and "RuntimeError: ")
    with pytest.raises(RuntimeError), otel.span("call"):
        raise error
    [span] = exported.get_finished_spans()
    assert span.status.description == status == describe_exception(error)
    message = dict(span.events[0].attributes or {})["exception.message"]
    assert message == exception_text(error)
