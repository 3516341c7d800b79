"""OpenTelemetry for deskwork: GenAI spans for every run, or free no-ops without the extra.

Install the ``otel`` extra (``pip install 'deskwork[otel]'``), configure a tracer provider
and exporter in your application, then instrument a desk::

    from deskwork.otel import instrument
    instrument(desk)                     # every runner of this desk now makes spans

Spans follow the OpenTelemetry GenAI semantic conventions and nest as
``deskwork.run`` → ``invoke_agent {worker}`` → ``chat {model}`` / ``execute_tool {tool}``.
A run started inside another run (a subworker, a flow step's child run) is a child span of
the parent run, and a span the application has open around ``desk.run`` is the run's parent.
The spans are built from the desk's events, so every runner (Worker, Workforce, Flow,
blackboard, graph, realtime turn) is covered by this one module.

Prompt and completion content is **not** recorded unless you opt in with
``instrument(desk, capture_content=True)`` or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``; even then it is redacted.

Without ``opentelemetry-api`` :func:`instrument` does nothing and :func:`span` yields a
shared do-nothing span. The graph layer's ``deskwork.graph.observability.otel`` delegates here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from deskwork.core.event import Event, EventType
from deskwork.core.redact import describe_exception, exception_text, redact_text, traceback_text
from deskwork.utils import escape_surrogates

try:
    from opentelemetry import context as _context
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised in environments without the otel extra
    _trace = None  # type: ignore[assignment]
    _context = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "NOOP_SPAN",
    "NOOP_TRACER",
    "OTEL_AVAILABLE",
    "TRACER_NAME",
    "Instrumentation",
    "NoOpSpan",
    "NoOpTracer",
    "clean_attributes",
    "get_tracer",
    "instrument",
    "record_error",
    "span",
]

OTEL_AVAILABLE: bool = _trace is not None
"""Whether ``opentelemetry-api`` is installed."""

TRACER_NAME = "deskwork"
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The standard opt-in for recording prompt/completion content."""


class NoOpSpan:
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

    def __enter__(self) -> NoOpSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


NOOP_SPAN = NoOpSpan()


class NoOpTracer:
    """Stands in for an OpenTelemetry tracer; its spans are :class:`NoOpSpan`."""

    __slots__ = ()

    @contextmanager
    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Iterator[NoOpSpan]:
        """Yield the shared no-op span."""
        yield NOOP_SPAN

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> NoOpSpan:
        """Return the shared no-op span."""
        return NOOP_SPAN


NOOP_TRACER = NoOpTracer()


def get_tracer(name: str = TRACER_NAME) -> Any:
    """The OpenTelemetry tracer called ``name``, or a no-op tracer without OpenTelemetry."""
    if _trace is None:
        return NOOP_TRACER
    return _trace.get_tracer(name)


def _text(value: str) -> str:
    """``value`` redacted, as an exporter can send it: a lone surrogate (``"\\ud800"``, which a
    run's texts may hold; UTF-8 cannot encode it, so OTLP's protobuf refuses it and the
    exporter drops the whole batch of spans) as its escape ``\\ud800``."""
    return escape_surrogates(redact_text(value))


def clean_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes OpenTelemetry can store: ``None`` dropped, strings redacted (and a lone
    surrogate escaped), other values converted with ``str()``."""
    clean: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str):
            clean[key] = _text(value)
        elif isinstance(value, bool | int | float):
            clean[key] = value
        elif isinstance(value, Sequence) and all(
            isinstance(item, str | bool | int | float) for item in value
        ):
            clean[key] = [_text(i) if isinstance(i, str) else i for i in value]
        else:
            clean[key] = _text(str(value))
    return clean


def record_error(span: Any, error: BaseException) -> None:
    """Record ``error`` on ``span`` as failed: an ``exception`` event (``exception.type``,
    ``exception.message``, ``exception.stacktrace``) and an ERROR status
    ``"{type}: {message}"``, every text redacted and escaped as in :func:`clean_attributes`
    (:func:`~deskwork.core.redact.describe_exception`'s text, as a run's errors show it).

    Use it instead of OpenTelemetry's ``span.record_exception`` and a span's automatic
    recording, which export the message and the stacktrace as they are: a provider's
    ``401 for key sk-...`` would reach the exporter, and a lone surrogate in a message makes
    the OTLP exporter drop the whole batch. A span that does not record is left alone.
    """
    if _trace is None or not span.is_recording():
        return
    module, qualname = type(error).__module__, type(error).__qualname__
    attributes = {
        "exception.type": qualname if module in ("builtins", "") else f"{module}.{qualname}",
        "exception.message": exception_text(error),
        "exception.stacktrace": traceback_text(error),
    }
    span.add_event("exception", attributes=clean_attributes(attributes))
    description = escape_surrogates(describe_exception(error))
    span.set_status(_trace.Status(_trace.StatusCode.ERROR, description))


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, Any] | None = None,
    *,
    tracer_name: str = TRACER_NAME,
    **extra: Any,
) -> Iterator[Any]:
    """A current span around a block (the no-op span without OpenTelemetry).

    Attributes come from ``attributes`` and keyword arguments. An exception leaving the block
    is recorded on the span with :func:`record_error` (redacted) and raised on unchanged.
    A lone surrogate in ``name`` is escaped, as in the attributes.
    """
    if _trace is None:
        yield NOOP_SPAN
        return
    merged = {**(attributes or {}), **extra}
    tracer = get_tracer(tracer_name)
    with tracer.start_as_current_span(
        escape_surrogates(name),
        attributes=clean_attributes(merged),
        record_exception=False,  # OpenTelemetry's own recording exports the texts unredacted
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except Exception as error:  # as OpenTelemetry: not GeneratorExit, CancelledError
            record_error(current, error)
            raise


# -- spans from a desk's events -----------------------------------------------------------


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def _system(model: str | None) -> str | None:
    """``gen_ai.system`` from a provider-prefixed model name (``openai/gpt-5`` → ``openai``)."""
    if not model:
        return None
    return model.split("/", 1)[0] if "/" in model else None


@dataclass
class _Open:
    span: Any
    parent_context: Any = None
    children: dict[str, Any] = field(default_factory=dict)


_AGENT_START: dict[str, str] = {
    EventType.WORKER_STARTED: "worker",
    EventType.WORKFORCE_STARTED: "workforce",
    "blackboard.started": "blackboard",
    EventType.STEP_STARTED: "step",
}
_AGENT_END: dict[str, str] = {
    EventType.WORKER_COMPLETED: "worker",
    EventType.WORKER_FAILED: "worker",
    EventType.WORKER_PAUSED: "worker",
    EventType.WORKFORCE_COMPLETED: "workforce",
    "blackboard.completed": "blackboard",
    EventType.STEP_COMPLETED: "step",
    EventType.STEP_PAUSED: "step",
}
_RUN_END: dict[str, str] = {
    EventType.RUN_COMPLETED: "completed",
    EventType.RUN_FAILED: "failed",
    EventType.RUN_PAUSED: "paused",
}


class Instrumentation:
    """Turns one desk's events into spans; :meth:`uninstrument` detaches it."""

    def __init__(self, desk: Desk, tracer: Any, capture_content: bool) -> None:
        self.desk = desk
        self.tracer = tracer
        self.capture_content = capture_content
        self._runs: dict[str, _Open] = {}
        self._spans: dict[tuple[str, str], Any] = {}  # (run_id, key) -> open span
        self._agent: dict[str, str] = {}  # run_id -> the agent that spoke last
        if tracer is not None:
            desk.event_bus.subscribe("*", self.on_event)

    def uninstrument(self) -> None:
        """Stop making spans for the desk."""
        if self.tracer is not None:
            self.desk.event_bus.unsubscribe("*", self.on_event)

    def on_event(self, event: Event) -> None:
        """Open or close the span ``event`` starts or ends."""
        kind = event.type
        if kind in (EventType.RUN_STARTED, EventType.RUN_RESUMED):
            self._start_run(event)
        elif kind in _RUN_END:
            self._end_run(event, _RUN_END[kind])
        elif kind in _AGENT_START:
            self._start_agent(event, _AGENT_START[kind])
        elif kind in _AGENT_END:
            self._end(event, f"{_AGENT_END[kind]}:{event.source}", failed=kind.endswith("failed"))
        elif kind == EventType.LLM_STARTED:
            self._start_chat(event)
        elif kind in (EventType.LLM_COMPLETED, EventType.LLM_FAILED):
            self._end_chat(event)
        elif kind == EventType.ASSISTANT_MESSAGE:
            self._assistant(event)
        elif kind == EventType.TOOL_STARTED:
            self._start_tool(event)
        elif kind in (EventType.TOOL_COMPLETED, EventType.TOOL_FAILED):
            self._end_tool(event)

    # -- runs: the OpenTelemetry context follows them, so child runs nest --------------

    def _start_run(self, event: Event) -> None:
        assert _trace is not None and _context is not None
        parent = _context.get_current()
        resumed = event.type == EventType.RUN_RESUMED
        run_span = self.tracer.start_span(
            escape_surrogates(f"deskwork.run {event.source}"),
            context=parent,
            start_time=_ns(event.timestamp),
            attributes=clean_attributes(
                {
                    "deskwork.run_id": event.run_id,
                    "deskwork.runner": event.source,
                    "deskwork.resumed": resumed,
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": event.source,
                }
            ),
        )
        self._runs[event.run_id] = _Open(run_span, parent)
        # the run's span is current in the run's own context (its task), so a run started
        # inside it, and the graph layer's spans, become its children
        _context.attach(_trace.set_span_in_context(run_span, parent))

    def _end_run(self, event: Event, status: str) -> None:
        assert _trace is not None and _context is not None
        run = self._runs.pop(event.run_id, None)
        if run is None:
            return
        end = _ns(event.timestamp)
        for key in [k for k in self._spans if k[0] == event.run_id]:
            self._spans.pop(key).end(end_time=end)  # anything a failure left open
        self._agent.pop(event.run_id, None)
        run.span.set_attribute("deskwork.status", status)
        if status == "failed":
            errors = "; ".join(str(e) for e in event.payload.get("errors", []))
            run.span.set_status(_trace.Status(_trace.StatusCode.ERROR, _text(errors)))
        run.span.end(end_time=end)
        _context.attach(run.parent_context)  # back to what was current before the run

    def _parent(self, run_id: str, agent: str | None) -> Any:
        assert _trace is not None
        holder = self._spans.get((run_id, f"worker:{agent}")) if agent else None
        if holder is None:
            run = self._runs.get(run_id)
            holder = run.span if run is not None else None
        return _trace.set_span_in_context(holder) if holder is not None else None

    def _open(self, event: Event, key: str, name: str, parent: Any, attrs: dict[str, Any]) -> None:
        self._spans[(event.run_id, key)] = self.tracer.start_span(
            escape_surrogates(name),  # a model's name, say, may hold a lone surrogate
            context=parent,
            start_time=_ns(event.timestamp),
            attributes=clean_attributes(attrs),
        )

    def _end(self, event: Event, key: str, *, failed: bool = False, error: str = "") -> None:
        assert _trace is not None
        open_span = self._spans.pop((event.run_id, key), None)
        if open_span is None:
            return
        if failed:
            open_span.set_status(_trace.Status(_trace.StatusCode.ERROR, _text(error)))
        open_span.end(end_time=_ns(event.timestamp))

    # -- agents, model calls, tool calls -------------------------------------------------

    def _start_agent(self, event: Event, kind: str) -> None:
        parent_agent = self._agent.get(event.run_id) if kind == "worker" else None
        parent = self._parent(event.run_id, parent_agent)
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.source,
            "deskwork.runner_type": kind,
            "deskwork.run_id": event.run_id,
        }
        label = "invoke_agent" if kind in ("worker", "workforce") else f"deskwork.{kind}"
        self._open(event, f"{kind}:{event.source}", f"{label} {event.source}", parent, attrs)

    def _start_chat(self, event: Event) -> None:
        self._agent[event.run_id] = event.source
        model = event.payload.get("model")
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": _system(model),
            "gen_ai.request.model": model,
            "gen_ai.agent.name": event.source,
        }
        parent = self._parent(event.run_id, event.source)
        self._open(event, f"chat:{event.source}", f"chat {model or ''}".strip(), parent, attrs)

    def _end_chat(self, event: Event) -> None:
        holder = self._spans.get((event.run_id, f"chat:{event.source}"))
        if holder is None:
            return
        p = event.payload
        holder.set_attributes(
            clean_attributes(
                {
                    "gen_ai.response.model": p.get("response_model") or p.get("model"),
                    "gen_ai.usage.input_tokens": p.get("prompt_tokens"),
                    "gen_ai.usage.output_tokens": p.get("completion_tokens"),
                    "deskwork.cost_usd": p.get("cost"),
                }
            )
        )
        failed = event.type == EventType.LLM_FAILED
        if failed:
            holder.set_attribute("error.type", str(p.get("error_type") or "llm_error"))
        self._end(event, f"chat:{event.source}", failed=failed, error=str(p.get("error", "")))

    def _assistant(self, event: Event) -> None:
        if not self.capture_content:
            return
        run = self._runs.get(event.run_id)
        target = self._spans.get((event.run_id, f"worker:{event.source}")) or (
            run.span if run else None
        )
        if target is None:
            return
        content = event.payload.get("content")
        calls = [c.get("name") for c in event.payload.get("tool_calls", [])]
        attrs = clean_attributes({"gen_ai.completion": content, "gen_ai.tool.calls": calls or None})
        target.add_event("gen_ai.choice", attributes=attrs)

    def _start_tool(self, event: Event) -> None:
        call_id = str(event.payload.get("tool_call_id", ""))
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.source,
            "gen_ai.tool.call.id": call_id,
        }
        parent = self._parent(event.run_id, self._agent.get(event.run_id))
        self._open(event, f"tool:{call_id}", f"execute_tool {event.source}", parent, attrs)

    def _end_tool(self, event: Event) -> None:
        call_id = str(event.payload.get("tool_call_id", ""))
        holder = self._spans.get((event.run_id, f"tool:{call_id}"))
        if holder is None:
            return
        failed = event.type == EventType.TOOL_FAILED
        if failed:
            holder.set_attribute("error.type", str(event.payload.get("kind") or "tool_error"))
        elif self.capture_content:
            holder.set_attributes(
                clean_attributes({"gen_ai.tool.call.result": event.payload.get("result_preview")})
            )
        self._end(event, f"tool:{call_id}", failed=failed, error=str(event.payload.get("error")))


def instrument(
    desk: Desk, *, capture_content: bool | None = None, tracer_provider: Any = None
) -> Instrumentation:
    """Make OpenTelemetry GenAI spans for every run of ``desk`` (a no-op without the extra).

    Args:
        desk: the desk to instrument.
        capture_content: record completions and tool results on spans (redacted); default
            ``$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, else off.
        tracer_provider: the provider to use (default: the global one).
    """
    if capture_content is None:
        capture_content = os.environ.get(CAPTURE_CONTENT_ENV, "").lower() in ("1", "true", "yes")
    if _trace is None:
        return Instrumentation(desk, None, capture_content)
    tracer = _trace.get_tracer(TRACER_NAME, tracer_provider=tracer_provider)
    return Instrumentation(desk, tracer, capture_content)
