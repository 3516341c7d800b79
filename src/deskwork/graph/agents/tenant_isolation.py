"""Multi-tenant isolation: agents must not change who a request belongs to.

:class:`TenantIsolationMiddleware` captures ``session_id`` and ``user_id`` in ``before_invoke`` and,
in ``after_invoke``, raises :class:`TenantIsolationError` if the agent changed either of them in the
state or tried to write them through ``response.slots_update``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.graph.agents._scoped import InvocationStack
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.core.exceptions import TenantIsolationError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.core.types import AgentResponse

__all__ = ["TenantIsolationMiddleware"]

_IDENTITY_FIELDS = ("session_id", "user_id")


class TenantIsolationMiddleware(AgentMiddleware):
    """Raises :class:`TenantIsolationError` when an agent mutates ``session_id``/``user_id``."""

    def __init__(self) -> None:
        self._captured: InvocationStack[dict[str, Any]] = InvocationStack(
            f"tenant_identity_{id(self)}"
        )

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        self._captured.push({key: state.get(key) for key in _IDENTITY_FIELDS})
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        captured = self._captured.pop() or {}
        for key in _IDENTITY_FIELDS:
            if key in response.slots_update and response.slots_update[key] != captured.get(key):
                raise TenantIsolationError(
                    f"Agent {agent_name!r} tried to change {key} through slots_update"
                )
            if state.get(key) != captured.get(key):
                raise TenantIsolationError(f"Agent {agent_name!r} changed {key} in the state")
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        self._captured.pop()
