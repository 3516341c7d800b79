"""Invocation metrics: the :class:`MetricsCollector` protocol and :class:`MetricsMiddleware`.

``MetricsMiddleware`` times every invocation with ``time.monotonic()`` (clock-skew safe) and hands
one :class:`InvocationRecord` (success) or :class:`ErrorRecord` (failure) to a collector. Implement
``MetricsCollector`` for Prometheus, Datadog, ...; :class:`InMemoryMetricsCollector` is for
development and tests.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from deskwork.graph.agents._scoped import InvocationStack
from deskwork.graph.agents.middleware import AgentMiddleware

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.core.types import AgentResponse

__all__ = [
    "ErrorRecord",
    "InMemoryMetricsCollector",
    "InvocationRecord",
    "MetricsCollector",
    "MetricsMiddleware",
]


@dataclass(frozen=True, slots=True)
class InvocationRecord:
    """One successful agent invocation."""

    agent_name: str
    """The agent that ran."""
    duration_seconds: float
    """Wall time from ``before_invoke`` to ``after_invoke`` (monotonic clock)."""
    next_agent: str | None = None
    """Where the agent routed (``None``: it terminated)."""
    token_usage: dict[str, int] = field(default_factory=dict)
    """The response's token usage (empty when the agent reported none)."""


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """One failed agent invocation."""

    agent_name: str
    """The agent that failed."""
    duration_seconds: float
    """Wall time until the failure (monotonic clock)."""
    error_type: str
    """The exception's class name."""
    error_message: str
    """``str(exception)``."""


@runtime_checkable
class MetricsCollector(Protocol):
    """Where :class:`MetricsMiddleware` sends its records."""

    def record_invocation(self, record: InvocationRecord) -> None:
        """Record a successful invocation."""
        ...

    def record_error(self, record: ErrorRecord) -> None:
        """Record a failed invocation."""
        ...


class InMemoryMetricsCollector:
    """Keeps every record in memory (thread-safe). For development and tests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._invocations: list[InvocationRecord] = []
        self._errors: list[ErrorRecord] = []

    def record_invocation(self, record: InvocationRecord) -> None:
        """Store a successful invocation."""
        with self._lock:
            self._invocations.append(record)

    def record_error(self, record: ErrorRecord) -> None:
        """Store a failed invocation."""
        with self._lock:
            self._errors.append(record)

    @property
    def invocations(self) -> list[InvocationRecord]:
        """A copy of the successful invocations, oldest first."""
        with self._lock:
            return list(self._invocations)

    @property
    def errors(self) -> list[ErrorRecord]:
        """A copy of the failed invocations, oldest first."""
        with self._lock:
            return list(self._errors)

    def total_tokens(self, agent_name: str | None = None) -> dict[str, int]:
        """Token usage summed per key, for one agent or all of them."""
        totals: dict[str, int] = {}
        for record in self.invocations:
            if agent_name is None or record.agent_name == agent_name:
                for key, value in record.token_usage.items():
                    totals[key] = totals.get(key, 0) + value
        return totals

    def clear(self) -> None:
        """Forget every record."""
        with self._lock:
            self._invocations.clear()
            self._errors.clear()

    def __repr__(self) -> str:
        return (
            f"InMemoryMetricsCollector(invocations={len(self._invocations)}, "
            f"errors={len(self._errors)})"
        )


class MetricsMiddleware(AgentMiddleware):
    """Records duration, token usage and errors of every invocation into ``collector``."""

    def __init__(self, collector: MetricsCollector) -> None:
        self.collector = collector
        self._starts: InvocationStack[float] = InvocationStack(f"metrics_start_{id(self)}")

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        self._starts.push(time.monotonic())
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        record = InvocationRecord(
            agent_name=agent_name,
            duration_seconds=self._elapsed(),
            next_agent=response.next_agent,
            token_usage=dict(response.token_usage or {}),
        )
        self.collector.record_invocation(record)
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        record = ErrorRecord(
            agent_name=agent_name,
            duration_seconds=self._elapsed(),
            error_type=type(error).__name__,
            error_message=str(error),
        )
        self.collector.record_error(record)

    def _elapsed(self) -> float:
        started = self._starts.pop()
        return 0.0 if started is None else max(0.0, time.monotonic() - started)

    def __repr__(self) -> str:
        return f"MetricsMiddleware(collector={self.collector!r})"
