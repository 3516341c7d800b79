"""Hooks around an agent invocation: the :class:`AgentMiddleware` base class.

``BaseAgent.invoke`` runs middleware as an onion::

    before_invoke   m1 -> m2 -> m3          (each may return a modified state)
        process()
    after_invoke    m3 -> m2 -> m1          (each may return a modified response)
    on_error        m3 -> m2 -> m1          (instead of after_invoke, on failure)

Each middleware leaves an invocation exactly once: through ``after_invoke`` or, if ``process()`` or
a hook raised before its ``after_invoke`` started, through ``on_error``. A middleware whose own
``before_invoke`` raised gets neither. A hook that raises stops the invocation (that is how
``TenantIsolationMiddleware`` and ``CircuitBreakerMiddleware`` refuse a call); ``on_error`` is
fire-and-forget: its failures are logged and never mask the original exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.core.types import AgentResponse

__all__ = ["AgentMiddleware"]


class AgentMiddleware:
    """Lifecycle hooks around agent execution. Override only the hooks you need.

    Keep per-invocation data in a ``contextvars.ContextVar`` (never on ``self``): one middleware
    instance is shared by every agent and every concurrent request that uses it.
    """

    async def before_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> OrchestratorState:
        """Runs before ``process()``; returns the state ``process()`` will see (default: as is)."""
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        """Runs after a successful ``process()``; returns the response to use (default: as is)."""
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        """Runs when ``process()`` or a later hook failed. Failures here are logged, not raised."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
