"""Optional OpenTelemetry instrumentation (the ``otel`` extra); no-ops when it is absent.

from deskwork.graph.observability import (
    OTEL_AVAILABLE, OpenTelemetryMiddleware, get_tracer, otel_span, sync_otel_span,
)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.graph.observability.otel import (
    OTEL_AVAILABLE,
    get_tracer,
    otel_span,
    sync_otel_span,
)

if TYPE_CHECKING:
    from deskwork.graph.observability.middleware import OpenTelemetryMiddleware

__all__ = ["OTEL_AVAILABLE", "OpenTelemetryMiddleware", "get_tracer", "otel_span", "sync_otel_span"]


def __getattr__(name: str) -> Any:
    # the middleware imports the agent layer; load it only when asked for
    if name == "OpenTelemetryMiddleware":
        from deskwork.graph.observability.middleware import OpenTelemetryMiddleware

        return OpenTelemetryMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
