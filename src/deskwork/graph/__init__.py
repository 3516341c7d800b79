"""Supervised agent graphs on LangGraph (the ``graph`` extra: ``pip install 'deskwork[graph]'``).

A supervisor routes between your agents along a declared topology; agents share tiered,
token-budgeted context slots, load knowledge modules in ReAct loops, and run through
middleware (metrics, tenant isolation, circuit breaking, memory injection, tracing)::

    from deskwork.graph import (
        AgentConfig, SupervisorAgent, TopologyResolver, create_initial_state, load_config,
    )
    from deskwork.graph.routing.graph_builder import build_hub_spoke_graph

Every name below is loaded on first use, so ``import deskwork.graph`` stays cheap; it fails
with :class:`deskwork.exceptions.MissingExtraError` when the extra is not installed.
A compiled graph runs on its own (``await graph.ainvoke(state)``) or through a desk
(``desk.run(graph, "Hello")``, see :class:`GraphRunner`) with run records, events and
checkpoints.
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from deskwork._extras import require


def _check_extra() -> None:
    """Fail early, naming the extra, when a package the graph layer needs is missing."""
    for module in ("langgraph", "langchain_core", "yaml", "structlog", "tenacity"):
        if find_spec(module) is None:
            require(module, "graph")  # raises MissingExtraError naming the extra


_check_extra()

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
    from deskwork.graph.checkpoint import RunStoreSaver
    from deskwork.graph.config.defaults import get_default_config
    from deskwork.graph.config.loader import (
        load_config,
        load_config_from_dict,
        load_config_from_string,
    )
    from deskwork.graph.config.schema import (
        AgentConfig,
        ContextConfig,
        KnowledgeConfig,
        OrchestratorConfig,
        RetryConfig,
        SessionConfig,
        SlotConfig,
        TierConfig,
        TieredSlotConfig,
        TimeoutConfig,
        TopologyConfig,
        TopologyEdgeConfig,
    )
    from deskwork.graph.context.eviction import (
        DemotionEviction,
        EvictionStrategy,
        FIFOEviction,
        LRUEviction,
        PriorityEviction,
    )
    from deskwork.graph.context.manager import SlotManager
    from deskwork.graph.context.persistence import (
        InMemorySlotPersistence,
        SlotPersistence,
        StoreSlotPersistence,
    )
    from deskwork.graph.context.slots import TIER_ORDER, Slot, SlotPool, SlotTier
    from deskwork.graph.core.exceptions import (
        AgentExecutionError,
        AgentProcessError,
        CircuitBreakerOpenError,
        ConfigLoadError,
        ConfigurationError,
        ConfigValidationError,
        ContextError,
        InvalidStateError,
        KnowledgeConfigValidationError,
        KnowledgeError,
        KnowledgeLoadError,
        KnowledgePathError,
        KnowledgeSlotNotFoundError,
        LLMError,
        LLMInvocationError,
        LLMNotConfiguredError,
        LLMRetryExhaustedError,
        OrchestratorError,
        RateLimitExceededError,
        ReactCancellationError,
        ReactConsecutiveErrorsError,
        ReactError,
        ReactExecutorNotConfiguredError,
        ReactMaxPassesError,
        ReservedStateKeyError,
        RoutingError,
        RoutingSelfLoopError,
        SessionError,
        SessionManagerError,
        SessionManagerNotConfiguredError,
        SlotPersistenceError,
        StateError,
        TenantIsolationError,
    )
    from deskwork.graph.core.llm_utils import (
        ainvoke_with_retry,
        ainvoke_with_timeout,
        astream_with_timeout,
        build_async_retryer,
        deregister_transient_exception,
        get_transient_exceptions,
        register_transient_exception,
    )
    from deskwork.graph.core.logging_context import (
        bind_logging_context,
        clear_logging_context,
        redact_pii,
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
    from deskwork.graph.knowledge.loader import FileSystemKnowledgeLoader, KnowledgeLoader
    from deskwork.graph.knowledge.models import KnowledgeLoadResult, KnowledgeSlotDef
    from deskwork.graph.knowledge.schema import (
        DEFAULT_MAX_PASSES,
        ReactActionSchema,
        ReactConfigSchema,
        ReactSlotSchema,
    )
    from deskwork.graph.knowledge.template_manager import ReactTemplateManager
    from deskwork.graph.llm import DeskworkChatModel, desk_model
    from deskwork.graph.react.executor import ReactExecutor
    from deskwork.graph.react.models import (
        ActionHandler,
        ReactParsedResponse,
        ReactStructuredResponse,
        TerminalActionResult,
    )
    from deskwork.graph.routing.graph_builder import (
        build_conditional_edge,
        build_hub_spoke_graph,
        build_topology_graph,
    )
    from deskwork.graph.routing.topology import TopologyResolver
    from deskwork.graph.runner import GraphRunner
    from deskwork.graph.session.in_memory import InMemorySessionManager
    from deskwork.graph.session.interface import SessionManager
    from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary
    from deskwork.graph.session.semantic import SemanticSearchMixin
    from deskwork.graph.session.store import StoreSessionManager


def _table(module: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, f"deskwork.graph.{module}")


_LAZY: dict[str, str] = {
    **_table("agents.base", "BaseAgent"),
    **_table("agents.circuit_breaker", "CircuitBreakerMiddleware", "CircuitBreakerState"),
    **_table("agents.memory_injection", "MemoryInjectionMiddleware"),
    **_table(
        "agents.metrics",
        "ErrorRecord",
        "InMemoryMetricsCollector",
        "InvocationRecord",
        "MetricsCollector",
        "MetricsMiddleware",
    ),
    **_table("agents.middleware", "AgentMiddleware"),
    **_table("agents.session_manager_agent", "SessionManagerAgent"),
    **_table("agents.supervisor", "SupervisorAgent"),
    **_table("agents.tenant_isolation", "TenantIsolationMiddleware"),
    **_table("checkpoint", "RunStoreSaver"),
    **_table("config.defaults", "get_default_config"),
    **_table("config.loader", "load_config", "load_config_from_dict", "load_config_from_string"),
    **_table(
        "config.schema",
        "AgentConfig",
        "ContextConfig",
        "KnowledgeConfig",
        "OrchestratorConfig",
        "RetryConfig",
        "SessionConfig",
        "SlotConfig",
        "TierConfig",
        "TieredSlotConfig",
        "TimeoutConfig",
        "TopologyConfig",
        "TopologyEdgeConfig",
    ),
    **_table(
        "context.eviction",
        "DemotionEviction",
        "EvictionStrategy",
        "FIFOEviction",
        "LRUEviction",
        "PriorityEviction",
    ),
    **_table("context.manager", "SlotManager"),
    **_table(
        "context.persistence", "InMemorySlotPersistence", "SlotPersistence", "StoreSlotPersistence"
    ),
    **_table("context.slots", "TIER_ORDER", "Slot", "SlotPool", "SlotTier"),
    **_table(
        "core.exceptions",
        "AgentExecutionError",
        "AgentProcessError",
        "CircuitBreakerOpenError",
        "ConfigLoadError",
        "ConfigValidationError",
        "ConfigurationError",
        "ContextError",
        "InvalidStateError",
        "KnowledgeConfigValidationError",
        "KnowledgeError",
        "KnowledgeLoadError",
        "KnowledgePathError",
        "KnowledgeSlotNotFoundError",
        "LLMError",
        "LLMInvocationError",
        "LLMNotConfiguredError",
        "LLMRetryExhaustedError",
        "OrchestratorError",
        "RateLimitExceededError",
        "ReactCancellationError",
        "ReactConsecutiveErrorsError",
        "ReactError",
        "ReactExecutorNotConfiguredError",
        "ReactMaxPassesError",
        "ReservedStateKeyError",
        "RoutingError",
        "RoutingSelfLoopError",
        "SessionError",
        "SessionManagerError",
        "SessionManagerNotConfiguredError",
        "SlotPersistenceError",
        "StateError",
        "TenantIsolationError",
    ),
    **_table(
        "core.llm_utils",
        "ainvoke_with_retry",
        "ainvoke_with_timeout",
        "astream_with_timeout",
        "build_async_retryer",
        "deregister_transient_exception",
        "get_transient_exceptions",
        "register_transient_exception",
    ),
    **_table("core.logging_context", "bind_logging_context", "clear_logging_context", "redact_pii"),
    **_table("core.orchestrator_context", "OrchestratorContext"),
    **_table("core.rate_limiting", "PerTenantRateLimiter", "RateLimiter", "SemaphoreRateLimiter"),
    **_table("core.state", "OrchestratorState", "create_initial_state"),
    **_table("core.token_counting", "CharDivisionTokenCounter", "TokenCounter"),
    **_table("core.types", "AgentResponse"),
    **_table("knowledge.loader", "FileSystemKnowledgeLoader", "KnowledgeLoader"),
    **_table("knowledge.models", "KnowledgeLoadResult", "KnowledgeSlotDef"),
    **_table(
        "knowledge.schema",
        "DEFAULT_MAX_PASSES",
        "ReactActionSchema",
        "ReactConfigSchema",
        "ReactSlotSchema",
    ),
    **_table("knowledge.template_manager", "ReactTemplateManager"),
    **_table("llm", "DeskworkChatModel", "desk_model"),
    **_table("react.executor", "ReactExecutor"),
    **_table(
        "react.models",
        "ActionHandler",
        "ReactParsedResponse",
        "ReactStructuredResponse",
        "TerminalActionResult",
    ),
    **_table(
        "routing.graph_builder",
        "build_conditional_edge",
        "build_hub_spoke_graph",
        "build_topology_graph",
    ),
    **_table("routing.topology", "TopologyResolver"),
    **_table("runner", "GraphRunner"),
    **_table("session.in_memory", "InMemorySessionManager"),
    **_table("session.interface", "SessionManager"),
    **_table("session.models", "Memory", "PaginatedResult", "SessionMessage", "Summary"),
    **_table("session.semantic", "SemanticSearchMixin"),
    **_table("session.store", "StoreSessionManager"),
}

__all__ = [
    "DEFAULT_MAX_PASSES",
    "TIER_ORDER",
    "ActionHandler",
    "AgentConfig",
    "AgentExecutionError",
    "AgentMiddleware",
    "AgentProcessError",
    "AgentResponse",
    "BaseAgent",
    "CharDivisionTokenCounter",
    "CircuitBreakerMiddleware",
    "CircuitBreakerOpenError",
    "CircuitBreakerState",
    "ConfigLoadError",
    "ConfigValidationError",
    "ConfigurationError",
    "ContextConfig",
    "ContextError",
    "DemotionEviction",
    "DeskworkChatModel",
    "ErrorRecord",
    "EvictionStrategy",
    "FIFOEviction",
    "FileSystemKnowledgeLoader",
    "GraphRunner",
    "InMemoryMetricsCollector",
    "InMemorySessionManager",
    "InMemorySlotPersistence",
    "InvalidStateError",
    "InvocationRecord",
    "KnowledgeConfig",
    "KnowledgeConfigValidationError",
    "KnowledgeError",
    "KnowledgeLoadError",
    "KnowledgeLoadResult",
    "KnowledgeLoader",
    "KnowledgePathError",
    "KnowledgeSlotDef",
    "KnowledgeSlotNotFoundError",
    "LLMError",
    "LLMInvocationError",
    "LLMNotConfiguredError",
    "LLMRetryExhaustedError",
    "LRUEviction",
    "Memory",
    "MemoryInjectionMiddleware",
    "MetricsCollector",
    "MetricsMiddleware",
    "OrchestratorConfig",
    "OrchestratorContext",
    "OrchestratorError",
    "OrchestratorState",
    "PaginatedResult",
    "PerTenantRateLimiter",
    "PriorityEviction",
    "RateLimitExceededError",
    "RateLimiter",
    "ReactActionSchema",
    "ReactCancellationError",
    "ReactConfigSchema",
    "ReactConsecutiveErrorsError",
    "ReactError",
    "ReactExecutor",
    "ReactExecutorNotConfiguredError",
    "ReactMaxPassesError",
    "ReactParsedResponse",
    "ReactSlotSchema",
    "ReactStructuredResponse",
    "ReactTemplateManager",
    "ReservedStateKeyError",
    "RetryConfig",
    "RoutingError",
    "RoutingSelfLoopError",
    "RunStoreSaver",
    "SemanticSearchMixin",
    "SemaphoreRateLimiter",
    "SessionConfig",
    "SessionError",
    "SessionManager",
    "SessionManagerAgent",
    "SessionManagerError",
    "SessionManagerNotConfiguredError",
    "SessionMessage",
    "Slot",
    "SlotConfig",
    "SlotManager",
    "SlotPersistence",
    "SlotPersistenceError",
    "SlotPool",
    "SlotTier",
    "StateError",
    "StoreSessionManager",
    "StoreSlotPersistence",
    "Summary",
    "SupervisorAgent",
    "TenantIsolationError",
    "TenantIsolationMiddleware",
    "TerminalActionResult",
    "TierConfig",
    "TieredSlotConfig",
    "TimeoutConfig",
    "TokenCounter",
    "TopologyConfig",
    "TopologyEdgeConfig",
    "TopologyResolver",
    "__version__",
    "ainvoke_with_retry",
    "ainvoke_with_timeout",
    "astream_with_timeout",
    "bind_logging_context",
    "build_async_retryer",
    "build_conditional_edge",
    "build_hub_spoke_graph",
    "build_topology_graph",
    "clear_logging_context",
    "create_initial_state",
    "deregister_transient_exception",
    "desk_model",
    "get_default_config",
    "get_transient_exceptions",
    "load_config",
    "load_config_from_dict",
    "load_config_from_string",
    "redact_pii",
    "register_transient_exception",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name == "__version__":
        from importlib.metadata import version

        return version("deskwork")
    raise AttributeError(f"module 'deskwork.graph' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
