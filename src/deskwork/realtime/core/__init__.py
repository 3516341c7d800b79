"""The realtime engine core: models, blackboard, agents, conditions, callbacks, engine.

Public modules mirror the documented import paths: ``core.agent``, ``core.models``,
``core.blackboard``, ``core.conditions``, ``core.callbacks``, ``core.engine``, ``core.events``.
"""

from __future__ import annotations

from deskwork.realtime.core.agent import AgentConfig, BaseAgent
from deskwork.realtime.core.blackboard import Blackboard, ReadOnlyBlackboardError
from deskwork.realtime.core.callbacks import AgentCallbackHandler, current_turn_id
from deskwork.realtime.core.conditions import ConditionEvaluator, TriggerConditions
from deskwork.realtime.core.engine import AgentEngine, RealtimeTurn
from deskwork.realtime.core.events import RealtimeEventType
from deskwork.realtime.core.models import (
    AgentContext,
    AgentInsight,
    AgentResponse,
    Event,
    Fact,
    InsightType,
    TranscriptSegment,
    TriggerType,
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
