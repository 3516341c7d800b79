"""Each ReAct pass is an OpenTelemetry span (a no-op without OpenTelemetry)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from react_helpers import MakeExecutor, xml

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """One exporter, attached once to the process's SDK provider (processors cannot be removed)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    if not getattr(provider, "_deskwork_react_exporter", False):
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        provider._deskwork_react_exporter = True  # type: ignore[attr-defined]
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


async def test_one_span_per_pass(make_executor: MakeExecutor, spans: InMemorySpanExporter) -> None:
    executor, _ = make_executor(["garbage", xml("decide", next_agent="x")])
    await executor.execute("hi", {})
    passes = [s for s in spans.get_finished_spans() if s.name == "react_pass"]
    assert [dict(s.attributes or {}) for s in passes] == [
        {
            "agent_name": "supervisor",
            "pass_num": 1,
            "react.action": "(invalid reply)",
            "react.terminal": False,
        },
        {
            "agent_name": "supervisor",
            "pass_num": 2,
            "react.action": "decide",
            "react.terminal": True,
        },
    ]
