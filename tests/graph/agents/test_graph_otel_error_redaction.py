"""OpenTelemetryMiddleware: an agent's failure is recorded on its span redacted and escaped.
``span.record_exception`` exported the message and the stacktrace as they were (a provider's
``401 for key sk-...`` reached the exporter) and a lone surrogate in an error, the agent's
route or the request id made the OTLP encoder raise, so the exporter dropped the batch."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.common")

from langchain_core.runnables import RunnableConfig
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.exceptions import AgentProcessError
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.observability import OpenTelemetryMiddleware
from deskwork.graph.testing import make_test_state

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.payload.signature"
PASSWORD = "hunter2-correct-horse"
SECRETS = (KEY, TOKEN, PASSWORD)


class FailingAgent(BaseAgent):
    def __init__(self, middleware: list[Any], error: Exception) -> None:
        super().__init__(
            AgentConfig(name="worker", type="custom", description="fails"), middleware=middleware
        )
        self.error = error

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        raise self.error


@pytest.fixture
def traced() -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def _texts(spans: Any) -> str:
    parts: list[str] = []
    for item in spans:
        parts.append(item.status.description or "")
        parts += [str(v) for v in (item.attributes or {}).values()]
        for event in item.events:
            parts += [str(v) for v in (event.attributes or {}).values()]
    return "\n".join(parts)


async def test_a_failed_agent_exports_no_secret(traced: Any) -> None:
    tracer, exporter = traced
    message = f"401 for key {KEY}; Authorization: Bearer {TOKEN}; api_key={PASSWORD}"
    agent = FailingAgent([OpenTelemetryMiddleware(tracer=tracer)], RuntimeError(message))
    with pytest.raises(AgentProcessError):
        await agent.invoke(make_test_state())

    [span] = exporter.get_finished_spans()
    texts = _texts([span])
    assert not [secret for secret in SECRETS if secret in texts]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.status.description or "").startswith("RuntimeError: 401 for key <redacted>")
    [event] = span.events
    attributes = dict(event.attributes or {})
    assert event.name == "exception" and attributes["exception.type"] == "RuntimeError"
    assert str(attributes["exception.message"]).startswith("401 for key <redacted>")
    assert "RuntimeError: 401 for key <redacted>" in str(attributes["exception.stacktrace"])


async def test_a_failed_agent_with_a_lone_surrogate_can_be_exported(traced: Any) -> None:
    tracer, exporter = traced
    agent = FailingAgent([OpenTelemetryMiddleware(tracer=tracer)], RuntimeError("bro\ud800ken"))
    with pytest.raises(AgentProcessError):
        await agent.invoke(make_test_state(request_id="req\udc80"))

    spans = exporter.get_finished_spans()
    assert encode_spans(spans).SerializeToString()  # raised UnicodeEncodeError before
    [span] = spans
    assert span.status.description == "RuntimeError: bro\\ud800ken"
    assert dict(span.attributes or {})["graph.request_id"] == "req\\udc80"


async def test_a_route_with_a_lone_surrogate_can_be_exported(traced: Any) -> None:
    tracer, exporter = traced
    middleware = OpenTelemetryMiddleware(tracer=tracer)
    state = make_test_state()
    await middleware.before_invoke("worker", state)
    response = AgentResponse(agent_name="worker", content="ok", next_agent="sup\ud800ervisor")
    await middleware.after_invoke("worker", state, response)

    spans = exporter.get_finished_spans()
    assert encode_spans(spans).SerializeToString()  # raised UnicodeEncodeError before
    assert dict(spans[0].attributes or {})["graph.next_agent"] == "sup\\ud800ervisor"


def _chained(message: str) -> Exception:
    """A ValueError raised from an error quoting ``message`` (its cause)."""
    try:
        try:
            raise RuntimeError(message)
        except RuntimeError as cause:
            raise ValueError("the model call failed") from cause
    except ValueError as error:
        return error


@pytest.mark.parametrize("chained", [False, True], ids=["the error", "its cause"])
async def test_the_applications_own_span_records_the_failure_without_a_secret(
    traced: Any, chained: bool
) -> None:
    # the application's span (OpenTelemetry's defaults) records the AgentProcessError passing
    # through it, with the traceback of its causes: the agent's own error held the key
    tracer, exporter = traced
    message = f"401 for key {KEY}; Authorization: Bearer {TOKEN}; api_key={PASSWORD}"
    error = _chained(message) if chained else RuntimeError(message)
    agent = FailingAgent([OpenTelemetryMiddleware(tracer=tracer)], error)
    with pytest.raises(AgentProcessError) as raised, tracer.start_as_current_span("request"):
        await agent.invoke(make_test_state())

    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert set(spans) == {"agent.invoke worker", "request"}
    assert not [secret for secret in SECRETS if secret in _texts(spans.values())]
    [event] = spans["request"].events
    stacktrace = str(dict(event.attributes or {})["exception.stacktrace"])
    assert "RuntimeError: 401 for key <redacted>" in stacktrace  # the cause is still shown
    assert raised.value.__cause__ is error and raised.value.cause is error  # the same, redacted
