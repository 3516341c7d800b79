"""Argument checks of ``AgentEngine``: a bad argument fails where it is given, by name.

Without them a wrong value was kept and failed later, far from its cause: ``max_phases=None``
raised a bare ``TypeError`` from a comparison, ``max_phases=2.5`` failed every turn in
``range()``, ``agent_timeout=-1`` made every agent "time out after -1s", a non-callable
``clock`` broke each cooldown check, and ``register_agent(None)`` raised ``AttributeError``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core.agent import BaseAgent
from deskwork.realtime.core.callbacks import AgentCallbackHandler

__all__ = [
    "HOOKS",
    "check_agent",
    "check_agents_given",
    "check_callbacks",
    "check_clock",
    "check_phases",
    "check_timeout",
]

HOOKS = tuple(name for name in vars(AgentCallbackHandler) if name.startswith("on_"))
"""The hooks a callback handler must provide (``on_turn_start`` ...)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_phases(max_phases: Any) -> int:
    """``max_phases`` when it is an integer (clamped later), else a ``ConfigurationError``."""
    if not isinstance(max_phases, int) or isinstance(max_phases, bool):
        raise ConfigurationError(f"AgentEngine: max_phases must be an integer, got {max_phases!r}")
    return max_phases


def check_timeout(agent_timeout: Any) -> float | None:
    """``agent_timeout`` when it is ``None`` or a number above 0, else a ``ConfigurationError``."""
    if agent_timeout is None:
        return None
    if not _is_number(agent_timeout) or math.isnan(agent_timeout) or agent_timeout <= 0:
        raise ConfigurationError(
            "AgentEngine: agent_timeout must be a number of seconds above 0, or None for no "
            f"limit, got {agent_timeout!r}"
        )
    seconds: float = agent_timeout  # kept as given (30 stays 30 in messages)
    return seconds


def check_clock(clock: Any) -> None:
    """Refuse a ``clock`` that cannot be called."""
    if not callable(clock):
        raise ConfigurationError(
            f"AgentEngine: clock must be a callable returning seconds, got {type(clock).__name__}"
        )


def check_callbacks(callbacks: Any) -> list[AgentCallbackHandler]:
    """The handlers in ``callbacks`` (``None``: none); each must provide every hook."""
    if callbacks is None:
        return []
    if isinstance(callbacks, str | bytes | Mapping) or not isinstance(callbacks, Iterable):
        raise ConfigurationError(
            "AgentEngine: callbacks must be a list of AgentCallbackHandler, got "
            f"{type(callbacks).__name__}"
        )
    handlers = list(callbacks)
    for index, handler in enumerate(handlers):
        missing = [hook for hook in HOOKS if not callable(getattr(handler, hook, None))]
        if missing:
            raise ConfigurationError(
                f"AgentEngine: callbacks[{index}] ({type(handler).__name__}) is not an "
                f"AgentCallbackHandler: it has no {', '.join(missing)}"
            )
    return handlers


def check_agent(agent: Any, where: str = "register_agent") -> BaseAgent:
    """``agent`` when it is a ``BaseAgent`` instance, else a ``ConfigurationError``."""
    if not isinstance(agent, BaseAgent):
        kind = f"the class {agent.__name__}" if isinstance(agent, type) else type(agent).__name__
        raise ConfigurationError(
            f"AgentEngine.{where}: expected a BaseAgent instance (e.g. DynamicAgent(config)), "
            f"got {kind}"
        )
    return agent


def check_agents_given(agents: Any) -> list[BaseAgent]:
    """The agents of ``replace_agents``: an iterable (list, tuple ...) of ``BaseAgent``."""
    if isinstance(agents, str | bytes | Mapping) or not isinstance(agents, Iterable):
        raise ConfigurationError(
            f"AgentEngine.replace_agents: expected a list of agents, got {type(agents).__name__}"
        )
    return [check_agent(agent, "replace_agents") for agent in agents]
