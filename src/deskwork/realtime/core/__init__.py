"""The realtime engine core: models, blackboard, agents, conditions, callbacks, engine.

Public modules mirror the documented import paths: ``core.agent``, ``core.models``,
``core.blackboard``, ``core.conditions``, ``core.callbacks``, ``core.engine``, ``core.events``,
``core.llm``.
"""

from __future__ import annotations

from deskwork.realtime.core._problems import AgentConfigurationError, ConfigProblem
from deskwork.realtime.core.agent import DEFAULT_MODEL, AgentConfig, BaseAgent
from deskwork.realtime.core.blackboard import Blackboard, ReadOnlyBlackboardError
from deskwork.realtime.core.callbacks import AgentCallbackHandler, current_turn_id
from deskwork.realtime.core.conditions import ConditionEvaluator, TriggerConditions
from deskwork.realtime.core.engine import MAX_PHASES, AgentEngine, RealtimeTurn
from deskwork.realtime.core.events import RealtimeEventType
from deskwork.realtime.core.llm import LLMClient
from deskwork.realtime.core.models import (
    AgentConfigOverride,
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
    "DEFAULT_MODEL",
    "MAX_PHASES",
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
    "ConfigProblem",
    "Event",
    "Fact",
    "InsightType",
    "LLMClient",
    "ReadOnlyBlackboardError",
    "RealtimeEventType",
    "RealtimeTurn",
    "TranscriptSegment",
    "TriggerConditions",
    "TriggerType",
    "current_turn_id",
]
