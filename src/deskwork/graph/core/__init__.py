"""Core of the graph layer: state, response type, exceptions, token counting, LLM call helpers,
rate limiting, logging context and the ``OrchestratorContext`` lifecycle.

Names load on first use (``exceptions`` needs nothing beyond deskwork; ``state`` needs LangGraph).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskwork.graph.core.llm_utils import (
        TRANSIENT_EXCEPTIONS,
        ainvoke_with_retry,
        ainvoke_with_timeout,
        astream_with_limits,
        astream_with_timeout,
        build_async_retryer,
        deregister_transient_exception,
        get_transient_exceptions,
        rate_limited,
        register_transient_exception,
    )
    from deskwork.graph.core.logging_context import (
        bind_logging_context,
        clear_logging_context,
        get_graph_logger,
        redact_pii,
        redact_secrets,
    )
    from deskwork.graph.core.orchestrator_context import OrchestratorContext
    from deskwork.graph.core.rate_limiting import (
        PerTenantRateLimiter,
        RateLimiter,
        SemaphoreRateLimiter,
    )
    from deskwork.graph.core.state import OrchestratorState, create_initial_state
    from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter
    from deskwork.graph.core.types import AgentResponse

_MODULES = {
    "llm_utils": (
        "TRANSIENT_EXCEPTIONS",
        "ainvoke_with_retry",
        "ainvoke_with_timeout",
        "astream_with_limits",
        "astream_with_timeout",
        "build_async_retryer",
        "deregister_transient_exception",
        "get_transient_exceptions",
        "rate_limited",
        "register_transient_exception",
    ),
    "logging_context": (
        "bind_logging_context",
        "clear_logging_context",
        "get_graph_logger",
        "redact_pii",
        "redact_secrets",
    ),
    "orchestrator_context": ("OrchestratorContext",),
    "rate_limiting": ("PerTenantRateLimiter", "RateLimiter", "SemaphoreRateLimiter"),
    "state": ("OrchestratorState", "create_initial_state"),
    "token_counting": ("CharDivisionTokenCounter", "TokenCounter"),
    "types": ("AgentResponse",),
}
_LAZY = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}

__all__ = [
    "TRANSIENT_EXCEPTIONS",
    "AgentResponse",
    "CharDivisionTokenCounter",
    "OrchestratorContext",
    "OrchestratorState",
    "PerTenantRateLimiter",
    "RateLimiter",
    "SemaphoreRateLimiter",
    "TokenCounter",
    "ainvoke_with_retry",
    "ainvoke_with_timeout",
    "astream_with_limits",
    "astream_with_timeout",
    "bind_logging_context",
    "build_async_retryer",
    "clear_logging_context",
    "create_initial_state",
    "deregister_transient_exception",
    "get_graph_logger",
    "get_transient_exceptions",
    "rate_limited",
    "redact_pii",
    "redact_secrets",
    "register_transient_exception",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "TRANSIENT_EXCEPTIONS":  # always the current registry, never a stale copy
        return importlib.import_module(module).get_transient_exceptions()
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
