"""The exception tree of ``deskwork.graph`` (the supervised-graph layer).

Every error the graph layer raises is an :class:`OrchestratorError`, which is a
:class:`deskwork.exceptions.DeskworkError`, so one ``except DeskworkError`` at an application
boundary catches graph failures too::

    DeskworkError
    └── OrchestratorError
        ├── ConfigurationError              (also deskwork.exceptions.ConfigurationError)
        │   ├── LLMNotConfiguredError
        │   ├── ReactExecutorNotConfiguredError
        │   ├── ConfigLoadError             (defined here, re-exported by config.loader)
        │   └── ConfigValidationError       (defined here, re-exported by config.loader)
        ├── AgentExecutionError
        │   └── AgentProcessError
        ├── LLMError
        │   ├── RateLimitExceededError
        │   ├── LLMInvocationError
        │   └── LLMRetryExhaustedError
        ├── SessionError
        │   ├── SessionManagerError
        │   └── SessionManagerNotConfiguredError
        ├── StateError
        │   └── InvalidStateError
        ├── ContextError
        │   └── SlotPersistenceError
        ├── KnowledgeError
        │   ├── KnowledgeSlotNotFoundError
        │   ├── KnowledgePathError
        │   ├── KnowledgeLoadError
        │   └── KnowledgeConfigValidationError
        ├── ReactError
        │   ├── ReactCancellationError
        │   ├── ReactMaxPassesError
        │   ├── ReservedStateKeyError
        │   └── ReactConsecutiveErrorsError
        ├── RoutingError
        │   └── RoutingSelfLoopError
        ├── TenantIsolationError
        └── CircuitBreakerOpenError
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deskwork.exceptions import ConfigurationError as _DeskworkConfigurationError
from deskwork.exceptions import DeskworkError

__all__ = [
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
]


class OrchestratorError(DeskworkError):
    """Base of every error raised by the supervised-graph layer."""


class ConfigurationError(OrchestratorError, _DeskworkConfigurationError):
    """Invalid configuration or setup (also a ``deskwork.exceptions.ConfigurationError``)."""


class LLMNotConfiguredError(ConfigurationError):
    """An agent that needs an LLM was built without one."""


class ReactExecutorNotConfiguredError(ConfigurationError):
    """ReAct mode was requested without a ``ReactTemplateManager``."""


class ConfigLoadError(ConfigurationError):
    """The config file does not exist or cannot be read."""


class ConfigValidationError(ConfigurationError):
    """The config content fails validation; the message names the offending fields.

    ``errors`` holds Pydantic's structured error list when validation produced one.
    """

    def __init__(self, message: str, *, errors: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.errors: list[Any] = list(errors)


class AgentExecutionError(OrchestratorError):
    """An agent failed while running."""


class AgentProcessError(AgentExecutionError):
    """An agent's ``process()`` raised something that is not an ``OrchestratorError``."""

    def __init__(self, message: str, *, agent_name: str = "", cause: BaseException | None = None):
        super().__init__(message)
        self.agent_name = agent_name
        self.cause = cause


class LLMError(OrchestratorError):
    """A model call failed."""

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class RateLimitExceededError(LLMError):
    """The rate limiter refused (or failed to grant) a model call."""


class LLMInvocationError(LLMError):
    """A single model call failed and no retry was configured."""


class LLMRetryExhaustedError(LLMError):
    """Every retry attempt of a model call failed; ``attempts`` says how many were made."""

    def __init__(
        self, message: str, *, cause: BaseException | None = None, attempts: int = 0
    ) -> None:
        super().__init__(message, cause=cause)
        self.attempts = attempts


class SessionError(OrchestratorError):
    """A session-layer failure."""


class SessionManagerError(SessionError):
    """A ``SessionManager`` operation failed (the original exception is the ``__cause__``)."""


class SessionManagerNotConfiguredError(SessionError):
    """A session operation was requested but no ``SessionManager`` was given."""


class StateError(OrchestratorError):
    """The graph state is not what the agent needs."""


class InvalidStateError(StateError):
    """A required key is missing from ``OrchestratorState``."""


class ContextError(OrchestratorError):
    """A context-slot failure."""


class SlotPersistenceError(ContextError):
    """A slot persistence backend failed to load or save."""


class KnowledgeError(OrchestratorError):
    """A knowledge-module failure."""


class KnowledgeSlotNotFoundError(KnowledgeError):
    """The requested knowledge slot does not exist."""


class KnowledgePathError(KnowledgeError):
    """A module path resolves outside the knowledge base directory."""


class KnowledgeLoadError(KnowledgeError):
    """A module file cannot be read, or loading it would exceed a token budget."""


class KnowledgeConfigValidationError(KnowledgeError):
    """A ``react_config.yaml`` fails validation."""


class ReactError(OrchestratorError):
    """A ReAct execution failure."""


class ReactCancellationError(ReactError):
    """The ReAct loop was cancelled through its ``cancel_event``."""


class ReactMaxPassesError(ReactError):
    """The ReAct loop used every pass without reaching a terminal action."""


class ReservedStateKeyError(ReactError):
    """A context dict or a handler's state updates tried to overwrite a reserved key."""


class ReactConsecutiveErrorsError(ReactError):
    """Too many consecutive unknown or failed actions."""


class RoutingError(OrchestratorError):
    """A routing failure."""


class RoutingSelfLoopError(RoutingError):
    """The supervisor tried to route to itself."""


class TenantIsolationError(OrchestratorError):
    """An agent changed ``session_id`` or ``user_id`` in the state."""


class CircuitBreakerOpenError(OrchestratorError):
    """The circuit breaker is open and rejects calls."""
