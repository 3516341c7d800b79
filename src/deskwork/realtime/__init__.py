"""Realtime triggered agents: conversational agents that fire on turns, keywords, silence,
intervals and events, sharing a structured blackboard.

::

    from deskwork.realtime import AgentEngine, AgentContext, Blackboard, DynamicAgent, TriggerType

    engine = AgentEngine(api_key="sk-...")          # or adapter=..., event_bus=..., desk=...
    engine.register_agent(DynamicAgent(config_dict))
    context = AgentContext(session_id="s1", recent_segments=[...], blackboard=Blackboard())
    response = await engine.process_turn(context, trigger_type=TriggerType.TURN_BASED)

``DynamicAgent`` (and Jinja2) load on first use (``deskwork.realtime.DynamicAgent`` or
``deskwork.realtime.library``), so importing ``deskwork.realtime`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.realtime.core import (
    DEFAULT_MODEL,
    AgentCallbackHandler,
    AgentConfig,
    AgentConfigOverride,
    AgentConfigurationError,
    AgentContext,
    AgentEngine,
    AgentInsight,
    AgentResponse,
    BaseAgent,
    Blackboard,
    ConditionEvaluator,
    Event,
    Fact,
    InsightType,
    ReadOnlyBlackboardError,
    RealtimeEventType,
    RealtimeTurn,
    TranscriptSegment,
    TriggerConditions,
    TriggerType,
    current_turn_id,
)

if TYPE_CHECKING:
    from deskwork.realtime.library.dynamic import DynamicAgent

__all__ = [
    "DEFAULT_MODEL",
    "AgentCallbackHandler",
    "AgentConfig",
    "AgentConfigOverride",
    "AgentConfigurationError",
    "AgentContext",
    "AgentEngine",
    "AgentInsight",
    "AgentResponse",
    "BaseAgent",
    "Blackboard",
    "ConditionEvaluator",
    "DynamicAgent",
    "Event",
    "Fact",
    "InsightType",
    "ReadOnlyBlackboardError",
    "RealtimeEventType",
    "RealtimeTurn",
    "TranscriptSegment",
    "TriggerConditions",
    "TriggerType",
    "current_turn_id",
]


def __getattr__(name: str) -> Any:
    """Load ``DynamicAgent`` (and Jinja2) on first use."""
    if name == "DynamicAgent":
        from deskwork.realtime.library.dynamic import DynamicAgent

        return DynamicAgent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
