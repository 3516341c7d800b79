"""Realtime triggered agents: conversational agents that fire on turns, keywords, silence,
intervals and events, sharing a structured blackboard.

::

    from deskwork.realtime import AgentEngine, AgentContext, Blackboard, TriggerType
    from deskwork.realtime.library import DynamicAgent

    engine = AgentEngine(api_key="sk-...")          # or adapter=..., event_bus=..., desk=...
    engine.register_agent(DynamicAgent(config_dict))
    context = AgentContext(session_id="s1", recent_segments=[...], blackboard=Blackboard())
    response = await engine.process_turn(context, trigger_type=TriggerType.TURN_BASED)

``DynamicAgent`` (and Jinja2) load on first use of ``deskwork.realtime.library``.
"""

from __future__ import annotations

from deskwork.realtime.core import (
    AgentCallbackHandler,
    AgentConfig,
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

__all__ = [
    "AgentCallbackHandler",
    "AgentConfig",
    "AgentContext",
    "AgentEngine",
    "AgentInsight",
    "AgentResponse",
    "BaseAgent",
    "Blackboard",
    "ConditionEvaluator",
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
