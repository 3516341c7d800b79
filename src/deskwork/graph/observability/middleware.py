"""OpenTelemetry spans around agent invocations: :class:`OpenTelemetryMiddleware`.

Each invocation gets one span, ``agent.invoke <agent_name>``, made current while the agent runs
(so spans opened inside ``process()``, e.g. by LLM instrumentation, nest under it). It carries
``agent.name`` and ``graph.request_id``; on success ``graph.next_agent`` and the token usage
(``gen_ai.usage.*``); on failure the exception and an ERROR status, redacted
(:func:`deskwork.otel.record_error`). ``session_id`` and ``user_id`` are deliberately not
recorded.

Without ``opentelemetry-api`` the tracer is a no-op and so is this middleware.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.graph.agents._scoped import InvocationStack
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.observability.otel import DEFAULT_TRACER_NAME, OTEL_AVAILABLE, get_tracer
from deskwork.otel import clean_attributes, record_error
from deskwork.utils import escape_surrogates

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.core.types import AgentResponse

__all__ = ["OpenTelemetryMiddleware"]


class OpenTelemetryMiddleware(AgentMiddleware):
    """Creates a span per agent invocation (per-invocation state in a ``ContextVar``).

    Args:
        tracer: A tracer to use (default: ``get_tracer(tracer_name)`` at each invocation, so a
            tracer provider configured later is picked up).
        tracer_name: The instrumentation name of the default tracer.
    """

    def __init__(self, *, tracer: Any = None, tracer_name: str = DEFAULT_TRACER_NAME) -> None:
        self._tracer = tracer
        self.tracer_name = tracer_name
        self._spans: InvocationStack[tuple[Any, Any]] = InvocationStack(f"otel_span_{id(self)}")

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        tracer = self._tracer if self._tracer is not None else get_tracer(self.tracer_name)
        attributes = {"agent.name": agent_name}
        if state.get("request_id"):
            attributes["graph.request_id"] = str(state.get("request_id"))
        span = tracer.start_span(
            escape_surrogates(f"agent.invoke {agent_name}"), attributes=clean_attributes(attributes)
        )
        self._spans.push((span, _make_current(span)))
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        entry = self._spans.pop()
        if entry is not None:
            span, token = entry
            attributes: dict[str, Any] = {"graph.next_agent": response.next_agent or ""}
            for key, value in (response.token_usage or {}).items():
                attributes[f"gen_ai.usage.{key}"] = int(value)
            span.set_attributes(clean_attributes(attributes))
            _finish(span, token, None)
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        entry = self._spans.pop()
        if entry is not None:
            _finish(entry[0], entry[1], error)

    def __repr__(self) -> str:
        return f"OpenTelemetryMiddleware(tracer_name={self.tracer_name!r})"


def _make_current(span: Any) -> Any:
    if not OTEL_AVAILABLE or not span.is_recording():
        return None
    from opentelemetry import context, trace

    return context.attach(trace.set_span_in_context(span))


def _finish(span: Any, token: Any, error: Exception | None) -> None:
    try:
        if error is not None:
            record_error(span, error)
        span.end()
    finally:
        if token is not None:
            from opentelemetry import context

            context.detach(token)
