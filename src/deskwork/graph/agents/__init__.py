"""The agent runtime: ``BaseAgent``, the built-in agents and the middleware.

Names load on first use, e.g. ``from deskwork.graph.agents import SupervisorAgent``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskwork.graph.agents.base import BaseAgent
    from deskwork.graph.agents.circuit_breaker import (
        CircuitBreakerMiddleware,
        CircuitBreakerState,
    )
    from deskwork.graph.agents.memory_injection import MemoryInjectionMiddleware
    from deskwork.graph.agents.metrics import (
        ErrorRecord,
        InMemoryMetricsCollector,
        InvocationRecord,
        MetricsCollector,
        MetricsMiddleware,
    )
    from deskwork.graph.agents.middleware import AgentMiddleware
    from deskwork.graph.agents.session_manager_agent import SessionManagerAgent
    from deskwork.graph.agents.supervisor import SupervisorAgent
    from deskwork.graph.agents.tenant_isolation import TenantIsolationMiddleware

_MODULES: dict[str, tuple[str, ...]] = {
    "base": ("BaseAgent",),
    "circuit_breaker": ("CircuitBreakerMiddleware", "CircuitBreakerState"),
    "memory_injection": ("MemoryInjectionMiddleware",),
    "metrics": (
        "ErrorRecord",
        "InMemoryMetricsCollector",
        "InvocationRecord",
        "MetricsCollector",
        "MetricsMiddleware",
    ),
    "middleware": ("AgentMiddleware",),
    "session_manager_agent": ("SessionManagerAgent",),
    "supervisor": ("SupervisorAgent",),
    "tenant_isolation": ("TenantIsolationMiddleware",),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "AgentMiddleware",
    "BaseAgent",
    "CircuitBreakerMiddleware",
    "CircuitBreakerState",
    "ErrorRecord",
    "InMemoryMetricsCollector",
    "InvocationRecord",
    "MemoryInjectionMiddleware",
    "MetricsCollector",
    "MetricsMiddleware",
    "SessionManagerAgent",
    "SupervisorAgent",
    "TenantIsolationMiddleware",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
