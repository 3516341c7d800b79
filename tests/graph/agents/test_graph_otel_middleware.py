"""OpenTelemetryMiddleware: one span per invocation, nested spans, errors, and the no-op path."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
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
from deskwork.graph.observability import otel as otel_module
from deskwork.graph.testing import make_test_state


class TracedAgent(BaseAgent):
    def __init__(self, name: str, middleware: list[Any], fail: bool = False) -> None:
        super().__init__(
            AgentConfig(name=name, type="custom", description="traced"), middleware=middleware
        )
        self.fail = fail
        self.tracer: Any = None

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        if self.tracer is not None:
            with self.tracer.start_as_current_span("inner.work"):
                await asyncio.sleep(0)
        if self.fail:
            raise ValueError("api_key=sk-secret123456 rejected")
        return AgentResponse(
            agent_name=self.name,
            content="ok",
            next_agent="supervisor",
            token_usage={"input_tokens": 4, "output_tokens": 2},
        )


@pytest.fixture
def traced() -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


async def test_span_per_invocation_with_route_and_usage(traced: Any) -> None:
    tracer, exporter = traced
    agent = TracedAgent("worker", [OpenTelemetryMiddleware(tracer=tracer)])
    agent.tracer = tracer
    await agent.invoke(make_test_state(request_id="req-7"))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    outer, inner = spans["agent.invoke worker"], spans["inner.work"]
    assert outer.attributes is not None
    assert dict(outer.attributes) == {
        "agent.name": "worker",
        "graph.request_id": "req-7",
        "graph.next_agent": "supervisor",
        "gen_ai.usage.input_tokens": 4,
        "gen_ai.usage.output_tokens": 2,
    }
    # spans opened inside process() nest under the agent span
    assert inner.parent is not None
    assert inner.parent.span_id == outer.context.span_id
    assert "session_id" not in str(outer.attributes)


async def test_failure_is_recorded_and_redacted(traced: Any) -> None:
    tracer, exporter = traced
    agent = TracedAgent("worker", [OpenTelemetryMiddleware(tracer=tracer)], fail=True)
    with pytest.raises(AgentProcessError):
        await agent.invoke(make_test_state())
    [span] = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert "sk-secret123456" not in (span.status.description or "")
    assert [e.name for e in span.events] == ["exception"]


async def test_concurrent_invocations_get_separate_spans(traced: Any) -> None:
    tracer, exporter = traced
    mw = OpenTelemetryMiddleware(tracer=tracer)
    agents = [TracedAgent(f"a{i}", [mw]) for i in range(3)]
    await asyncio.gather(*(a.invoke(make_test_state()) for a in agents))
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ["agent.invoke a0", "agent.invoke a1", "agent.invoke a2"]
    assert all(s.parent is None for s in exporter.get_finished_spans())


async def test_is_a_no_op_without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otel_module, "_trace", None)
    monkeypatch.setattr("deskwork.graph.observability.middleware.OTEL_AVAILABLE", False)
    agent = TracedAgent("worker", [OpenTelemetryMiddleware()])
    update = await agent.invoke(make_test_state())
    assert update["current_agent"] == "supervisor"
    failing = TracedAgent("worker", [OpenTelemetryMiddleware()], fail=True)
    with pytest.raises(AgentProcessError):
        await failing.invoke(make_test_state())
