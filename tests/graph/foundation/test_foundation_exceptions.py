"""The graph exception tree matches the seed's hierarchy and carries its context attributes."""

from __future__ import annotations

import pytest

from deskwork.exceptions import ConfigurationError as DeskworkConfigurationError
from deskwork.exceptions import DeskworkError
from deskwork.graph.core import exceptions as exc

# child -> parent, as drawn in the seed (section 2.5)
TREE = {
    "OrchestratorError": "DeskworkError",
    "ConfigurationError": "OrchestratorError",
    "LLMNotConfiguredError": "ConfigurationError",
    "ReactExecutorNotConfiguredError": "ConfigurationError",
    "ConfigLoadError": "ConfigurationError",
    "ConfigValidationError": "ConfigurationError",
    "AgentExecutionError": "OrchestratorError",
    "AgentProcessError": "AgentExecutionError",
    "LLMError": "OrchestratorError",
    "RateLimitExceededError": "LLMError",
    "LLMInvocationError": "LLMError",
    "LLMRetryExhaustedError": "LLMError",
    "SessionError": "OrchestratorError",
    "SessionManagerError": "SessionError",
    "SessionManagerNotConfiguredError": "SessionError",
    "StateError": "OrchestratorError",
    "InvalidStateError": "StateError",
    "ContextError": "OrchestratorError",
    "SlotPersistenceError": "ContextError",
    "KnowledgeError": "OrchestratorError",
    "KnowledgeSlotNotFoundError": "KnowledgeError",
    "KnowledgePathError": "KnowledgeError",
    "KnowledgeLoadError": "KnowledgeError",
    "KnowledgeConfigValidationError": "KnowledgeError",
    "ReactError": "OrchestratorError",
    "ReactCancellationError": "ReactError",
    "ReactMaxPassesError": "ReactError",
    "ReservedStateKeyError": "ReactError",
    "ReactConsecutiveErrorsError": "ReactError",
    "RoutingError": "OrchestratorError",
    "RoutingSelfLoopError": "RoutingError",
    "TenantIsolationError": "OrchestratorError",
    "CircuitBreakerOpenError": "OrchestratorError",
}


def _cls(name: str) -> type[BaseException]:
    if name == "DeskworkError":
        return DeskworkError
    value = getattr(exc, name)
    assert isinstance(value, type)
    return value


@pytest.mark.parametrize(("child", "parent"), sorted(TREE.items()))
def test_direct_parent(child: str, parent: str) -> None:
    cls = _cls(child)
    assert _cls(parent) in cls.__bases__


def test_module_exports_exactly_the_tree() -> None:
    assert set(exc.__all__) == set(TREE)


def test_configuration_errors_are_also_deskwork_configuration_errors() -> None:
    assert issubclass(exc.ConfigValidationError, DeskworkConfigurationError)
    assert issubclass(exc.ConfigValidationError, ValueError)


def test_context_attributes() -> None:
    cause = ValueError("inner")
    retry = exc.LLMRetryExhaustedError("failed", cause=cause, attempts=3)
    assert (retry.cause, retry.attempts, str(retry)) == (cause, 3, "failed")
    assert exc.LLMInvocationError("x", cause=cause).cause is cause
    assert exc.RateLimitExceededError("x").cause is None
    process = exc.AgentProcessError("boom", agent_name="greeter", cause=cause)
    assert (process.agent_name, process.cause) == ("greeter", cause)
    validation = exc.ConfigValidationError("bad", errors=[{"loc": ("agents",)}])
    assert validation.errors == [{"loc": ("agents",)}]
    assert exc.ConfigValidationError("bad").errors == []


def test_one_except_catches_every_graph_error() -> None:
    for name in TREE:
        cls = _cls(name)
        assert issubclass(cls, DeskworkError)
        if name != "OrchestratorError":
            assert issubclass(cls, exc.OrchestratorError)
