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
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from deskwork.core.redact import redact_text

try:
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised in environments without the otel extra
    _trace = None  # type: ignore[assignment]

__all__ = ["OTEL_AVAILABLE", "get_tracer", "otel_span", "sync_otel_span"]

OTEL_AVAILABLE: bool = _trace is not None
"""Whether ``opentelemetry-api`` is installed."""

DEFAULT_TRACER_NAME = "deskwork.graph"


class _NoOpSpan:
    """Stands in for an OpenTelemetry span; every method does nothing."""

    __slots__ = ()

    def set_attribute(self, key: str, value: Any) -> None:
        """Do nothing."""

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Do nothing."""

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        """Do nothing."""

    def record_exception(self, exception: BaseException, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""

    def set_status(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""

    def update_name(self, name: str) -> None:
        """Do nothing."""

    def end(self, end_time: int | None = None) -> None:
        """Do nothing."""

    def is_recording(self) -> bool:
        """Always ``False``."""
        return False

    def __enter__(self) -> _NoOpSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_NOOP_SPAN = _NoOpSpan()


class _NoOpTracer:
    """Stands in for an OpenTelemetry tracer; its spans are :class:`_NoOpSpan`."""

    __slots__ = ()

    @contextmanager
    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Iterator[_NoOpSpan]:
        """Yield the shared no-op span."""
        yield _NOOP_SPAN

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> _NoOpSpan:
        """Return the shared no-op span."""
        return _NOOP_SPAN


_NOOP_TRACER = _NoOpTracer()


def get_tracer(name: str = DEFAULT_TRACER_NAME) -> Any:
    """The OpenTelemetry tracer called ``name``, or a no-op tracer without OpenTelemetry."""
    if _trace is None:
        return _NOOP_TRACER
    return _trace.get_tracer(name)


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str):
            clean[key] = redact_text(value)
        elif isinstance(value, bool | int | float):
            clean[key] = value
        elif isinstance(value, Sequence) and all(
            isinstance(item, str | bool | int | float) for item in value
        ):
            clean[key] = [redact_text(i) if isinstance(i, str) else i for i in value]
        else:
            clean[key] = redact_text(str(value))
    return clean


@contextmanager
def sync_otel_span(
    name: str, attributes: Mapping[str, Any] | None = None, **extra: Any
) -> Iterator[Any]:
    """A span around a block (the no-op span without OpenTelemetry).

    Attributes come from ``attributes`` and keyword arguments. An exception leaving the block
    is recorded on the span, which is marked as failed.
    """
    if _trace is None:
        yield _NOOP_SPAN
        return
    merged = {**(attributes or {}), **extra}
    with get_tracer().start_as_current_span(name, attributes=_clean(merged)) as span:
        yield span


@asynccontextmanager
async def otel_span(
    name: str, attributes: Mapping[str, Any] | None = None, **extra: Any
) -> AsyncIterator[Any]:
    """``async with`` form of :func:`sync_otel_span`."""
    with sync_otel_span(name, attributes, **extra) as span:
        yield span
