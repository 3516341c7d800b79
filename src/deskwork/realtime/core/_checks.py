"""Argument checks of ``AgentEngine``: a bad argument fails where it is given, by name.

Without them a wrong value was kept and failed later, far from its cause: ``max_phases=None``
raised a bare ``TypeError`` from a comparison, ``max_phases=2.5`` failed every turn in
``range()``, ``agent_timeout=-1`` made every agent "time out after -1s", a non-callable
``clock`` broke each cooldown check, and ``register_agent(None)`` raised ``AttributeError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core.agent import BaseAgent
from deskwork.realtime.core.callbacks import AgentCallbackHandler
from deskwork.realtime.core.models import AgentContext, TriggerType
from deskwork.utils import check_seconds, is_integer, is_items

__all__ = [
    "HOOKS",
    "TurnArguments",
    "check_agent",
    "check_agents_given",
    "check_api_key",
    "check_callbacks",
    "check_clock",
    "check_context",
    "check_ids",
    "check_names",
    "check_phases",
    "check_services",
    "check_text",
    "check_timeout",
    "check_turn",
]

HOOKS = tuple(name for name in vars(AgentCallbackHandler) if name.startswith("on_"))
"""The hooks a callback handler may provide (``on_turn_start`` ...)."""


def check_phases(max_phases: Any) -> int:
    """``max_phases`` when it is an integer (clamped later), else a ``ConfigurationError``."""
    if not is_integer(max_phases):
        raise ConfigurationError(f"AgentEngine: max_phases must be an integer, got {max_phases!r}")
    return max_phases


def check_timeout(agent_timeout: Any) -> float | None:
    """``agent_timeout`` when it is ``None`` or a finite number above 0 (``check_seconds``)."""
    return check_seconds(agent_timeout, "AgentEngine: agent_timeout")


def check_clock(clock: Any) -> None:
    """Refuse a ``clock`` that cannot be called."""
    if not callable(clock):
        raise ConfigurationError(
            f"AgentEngine: clock must be a callable returning seconds, got {type(clock).__name__}"
        )


def check_callbacks(callbacks: Any) -> list[AgentCallbackHandler]:
    """The handlers in ``callbacks`` (``None``: none). A handler need not subclass
    ``AgentCallbackHandler``: it needs at least one of its hooks, and every hook it has must
    be async (a hook it lacks is not called, so a handler written before a hook was added
    keeps working)."""
    if callbacks is None:
        return []
    if not is_items(callbacks):
        raise ConfigurationError(
            "AgentEngine: callbacks must be a list of AgentCallbackHandler, got "
            f"{type(callbacks).__name__}"
        )
    handlers = list(callbacks)
    for index, handler in enumerate(handlers):
        where = f"AgentEngine: callbacks[{index}] ({type(handler).__name__})"
        present = [hook for hook in HOOKS if getattr(handler, hook, None) is not None]
        if not present:
            raise ConfigurationError(
                f"{where} is not an AgentCallbackHandler: it has none of its hooks "
                f"({', '.join(HOOKS)})"
            )
        sync = [hook for hook in present if not inspect.iscoroutinefunction(getattr(handler, hook))]
        if sync:
            raise ConfigurationError(
                f"{where}: hooks must be async (async def), not {', '.join(sync)}; the engine "
                "awaits them"
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
    if not is_items(agents):
        raise ConfigurationError(
            f"AgentEngine.replace_agents: expected a list of agents, got {type(agents).__name__}"
        )
    return [check_agent(agent, "replace_agents") for agent in agents]


TurnArguments = tuple[TriggerType, frozenset[str] | None, dict[str, Any]]
"""A turn's checked trigger type, allow-list (``None``: everyone) and trigger metadata."""


def check_context(context: Any, where: str) -> AgentContext:
    """``context`` when it is an ``AgentContext``, else a ``TypeError`` naming ``where``."""
    if not isinstance(context, AgentContext):
        raise TypeError(
            f"AgentEngine.{where}: context must be an AgentContext, got {type(context).__name__}"
        )
    return context


def check_turn(
    trigger_type: Any, allowed_agent_ids: Any, trigger_metadata: Any, where: str
) -> TurnArguments:
    """Check the arguments of one turn (``process_turn`` or ``turn``).

    Raises:
        ValueError: ``trigger_type`` is not a ``TriggerType`` (or its value).
        TypeError: ``allowed_agent_ids`` is not ``None`` or a list of ids (a string would be
            read as its characters), or ``trigger_metadata`` is not ``None`` or a mapping.
    """
    try:
        trigger = TriggerType(trigger_type)
    except ValueError:
        known = ", ".join(repr(t.value) for t in TriggerType)
        raise ValueError(
            f"AgentEngine.{where}: trigger_type must be one of {known}, got {trigger_type!r}"
        ) from None
    allowed = check_ids(allowed_agent_ids, where)
    if trigger_metadata is not None and not isinstance(trigger_metadata, Mapping):
        raise TypeError(
            f"AgentEngine.{where}: trigger_metadata must be a mapping or None, "
            f"got {type(trigger_metadata).__name__}"
        )
    return trigger, allowed, dict(trigger_metadata or {})


def check_ids(allowed_agent_ids: Any, where: str) -> frozenset[str] | None:
    """An allow-list of agent ids (``None``: everyone); a string is refused, not split."""
    if allowed_agent_ids is None:
        return None
    if not is_items(allowed_agent_ids):
        raise TypeError(
            f"AgentEngine.{where}: allowed_agent_ids must be a list of agent ids or None, "
            f"got {type(allowed_agent_ids).__name__}"
        )
    ids = list(allowed_agent_ids)
    wrong = sorted({type(i).__name__ for i in ids if not isinstance(i, str)})
    if wrong:
        raise TypeError(
            f"AgentEngine.{where}: allowed_agent_ids must hold agent ids (strings), "
            f"got {', '.join(wrong)}"
        )
    return frozenset(ids)


def check_text(text: Any, where: str) -> str:
    """``text`` when it is a string, else a ``TypeError`` naming ``where``."""
    if not isinstance(text, str):
        raise TypeError(f"AgentEngine.{where}: text must be a string, got {type(text).__name__}")
    return text


def check_services(adapter: Any, event_bus: Any, desk: Any) -> None:
    """Refuse an ``adapter``, ``event_bus`` or ``desk`` of the wrong kind (``None`` is fine).

    A wrong ``desk`` silently gave the engine no event bus (every event lost); a wrong
    ``adapter`` or ``event_bus`` failed every agent or every turn later.
    """
    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.event_bus import EventBus
    from deskwork.runtime.desk import Desk

    for name, value, kind in (
        ("adapter", adapter, BaseModelAdapter),
        ("event_bus", event_bus, EventBus),
        ("desk", desk, Desk),
    ):
        if value is not None and not isinstance(value, kind):
            got = type(value).__name__
            raise ConfigurationError(
                f"AgentEngine: {name} must be an instance of {kind.__name__}, got {got}"
            )


def check_names(event_names: Any, where: str) -> frozenset[str]:
    """Event names given as a list (a string is refused, not read as its letters)."""
    if not is_items(event_names):
        raise TypeError(
            f"AgentEngine.{where}: event_names must be a list of event names, got "
            f"{type(event_names).__name__}"
        )
    return frozenset(event_names)


def check_api_key(api_key: Any, where: str) -> None:
    """Refuse an ``api_key`` that is not a string or ``None`` (its value is not shown)."""
    if api_key is not None and not isinstance(api_key, str):
        raise ConfigurationError(
            f"AgentEngine{where}: api_key must be a string or None, got {type(api_key).__name__}"
        )
