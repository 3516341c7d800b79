"""OpenTelemetry spans for the graph layer, or free no-ops when OpenTelemetry is absent.

Install the ``otel`` extra (``pip install 'deskwork[otel]'``) and configure a tracer provider
and exporter in your application; without ``opentelemetry-api`` every function here returns a
shared do-nothing span, so instrumented code costs next to nothing::

    async with otel_span("my_operation", attributes={"key": "value"}) as span:
        ...
    with sync_otel_span("react_pass", agent_name="supervisor", pass_num=1):
        ...

String attribute values pass through deskwork's secret redaction; ``None`` values are dropped
and values OpenTelemetry cannot store are converted with ``str()``.

This module delegates to :mod:`deskwork.otel` (the one OpenTelemetry module of deskwork);
it only sets the graph layer's tracer name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from deskwork import otel as _core

try:
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised in environments without the otel extra
    _trace = None  # type: ignore[assignment]
"""``None`` without OpenTelemetry (tests set it to ``None`` to force the no-ops)."""

__all__ = ["OTEL_AVAILABLE", "get_tracer", "otel_span", "sync_otel_span"]

OTEL_AVAILABLE: bool = _core.OTEL_AVAILABLE
"""Whether ``opentelemetry-api`` is installed."""

DEFAULT_TRACER_NAME = "deskwork.graph"


def get_tracer(name: str = DEFAULT_TRACER_NAME) -> Any:
    """The OpenTelemetry tracer called ``name``, or a no-op tracer without OpenTelemetry."""
    if _trace is None:
        return _core.NOOP_TRACER
    return _core.get_tracer(name)


@contextmanager
def sync_otel_span(
    name: str, attributes: Mapping[str, Any] | None = None, **extra: Any
) -> Iterator[Any]:
    """A span around a block (the no-op span without OpenTelemetry).

    Attributes come from ``attributes`` and keyword arguments. An exception leaving the block
    is recorded on the span, which is marked as failed.
    """
    if _trace is None:
        yield _core.NOOP_SPAN
        return
    with _core.span(name, attributes, tracer_name=DEFAULT_TRACER_NAME, **extra) as span:
        yield span


@asynccontextmanager
async def otel_span(
    name: str, attributes: Mapping[str, Any] | None = None, **extra: Any
) -> AsyncIterator[Any]:
    """``async with`` form of :func:`sync_otel_span`."""
    with sync_otel_span(name, attributes, **extra) as span:
        yield span
