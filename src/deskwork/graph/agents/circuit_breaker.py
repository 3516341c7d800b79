"""Fail fast during sustained failures: :class:`CircuitBreakerMiddleware`.

State machine (one breaker instance = one circuit, shared by every agent it is attached to)::

    CLOSED --(failure_threshold consecutive failures)--> OPEN
    OPEN --(recovery_timeout_seconds elapsed)--> HALF_OPEN   (one probe call is let through)
    HALF_OPEN --(probe succeeds)--> CLOSED
    HALF_OPEN --(probe fails)--> OPEN (the recovery timer restarts)

While OPEN (and while a HALF_OPEN probe is in flight) calls are rejected with
:class:`CircuitBreakerOpenError` before the agent runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from deskwork.graph.agents._scoped import InvocationStack
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.core.exceptions import CircuitBreakerOpenError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.core.types import AgentResponse

__all__ = ["CircuitBreakerMiddleware", "CircuitBreakerState"]


class CircuitBreakerState(StrEnum):
    """Where the breaker is in its state machine."""

    CLOSED = "closed"
    """Calls pass; consecutive failures are counted."""
    OPEN = "open"
    """Calls are rejected until the recovery timeout elapses."""
    HALF_OPEN = "half_open"
    """One probe call is let through to test recovery."""


class CircuitBreakerMiddleware(AgentMiddleware):
    """CLOSED -> OPEN -> HALF_OPEN -> CLOSED circuit breaker around agent invocations.

    Args:
        failure_threshold: Consecutive failures that open the circuit (>= 1).
        recovery_timeout_seconds: How long the circuit stays open before a probe (>= 0).
        clock: Monotonic time source (injectable for tests).
    """

    def __init__(
        self,
        *,
        failure_threshold: int = 5,
        recovery_timeout_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError(f"failure_threshold must be >= 1, got {failure_threshold}")
        if recovery_timeout_seconds < 0:
            raise ValueError(
                f"recovery_timeout_seconds must be >= 0, got {recovery_timeout_seconds}"
            )
        self.failure_threshold = failure_threshold
        self.recovery_timeout_seconds = recovery_timeout_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CircuitBreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probe_in_flight = False
        self._is_probe: InvocationStack[bool] = InvocationStack(f"breaker_probe_{id(self)}")

    @property
    def state(self) -> CircuitBreakerState:
        """The current state (an OPEN circuit whose timeout elapsed reports HALF_OPEN)."""
        with self._lock:
            return self._current_state()

    @property
    def failure_count(self) -> int:
        """Consecutive failures counted since the circuit last closed."""
        return self._failures

    def reset(self) -> None:
        """Close the circuit and forget every failure."""
        with self._lock:
            self._state = CircuitBreakerState.CLOSED
            self._failures = 0
            self._probe_in_flight = False

    def _current_state(self) -> CircuitBreakerState:
        if (
            self._state is CircuitBreakerState.OPEN
            and self._clock() - self._opened_at >= self.recovery_timeout_seconds
        ):
            return CircuitBreakerState.HALF_OPEN
        return self._state

    def _admit(self, agent_name: str) -> bool:
        """Let a call in (returning whether it is the half-open probe) or raise."""
        with self._lock:
            state = self._current_state()
            if state is CircuitBreakerState.CLOSED:
                return False
            if state is CircuitBreakerState.HALF_OPEN and not self._probe_in_flight:
                self._state = CircuitBreakerState.HALF_OPEN
                self._probe_in_flight = True
                return True
            remaining = max(0.0, self.recovery_timeout_seconds - (self._clock() - self._opened_at))
        detail = (
            "a recovery probe is in flight"
            if state is CircuitBreakerState.HALF_OPEN
            else (f"retry in {remaining:.1f}s")
        )
        raise CircuitBreakerOpenError(
            f"Circuit breaker is {state.value} after {self._failures} consecutive failures; "
            f"call to agent {agent_name!r} rejected ({detail})"
        )

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        self._is_probe.push(self._admit(agent_name))
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        self._is_probe.pop()
        with self._lock:
            self._state = CircuitBreakerState.CLOSED
            self._failures = 0
            self._probe_in_flight = False
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        is_probe = bool(self._is_probe.pop())
        with self._lock:
            self._failures += 1
            if is_probe:
                self._probe_in_flight = False
            if is_probe or self._failures >= self.failure_threshold:
                self._state = CircuitBreakerState.OPEN
                self._opened_at = self._clock()

    def __repr__(self) -> str:
        return (
            f"CircuitBreakerMiddleware(state={self.state.value}, failures={self._failures}/"
            f"{self.failure_threshold}, recovery_timeout_seconds={self.recovery_timeout_seconds})"
        )
