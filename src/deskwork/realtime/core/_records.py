"""Plain records shared by the blackboard and the agents: enums, events, facts, segments.

They live apart from ``models`` so that ``blackboard`` can import them without a cycle
(``models.AgentContext`` holds a ``Blackboard``).
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Event", "Fact", "InsightType", "TranscriptSegment", "TriggerType"]


class TriggerType(StrEnum):
    """What made the host call ``process_turn``. Members compare equal to their values."""

    TURN_BASED = "turn_based"
    """A speaker finished a turn."""
    KEYWORD = "keyword"
    """A keyword was detected in the transcript (detection is the host's job)."""
    SILENCE = "silence"
    """Dead air exceeded a threshold."""
    INTERVAL = "interval"
    """A periodic timer fired."""
    EVENT = "event"
    """Another agent emitted an event this turn (phase 2 and later)."""
    FORCE = "force"
    """The host forces a run: trigger matching, cooldowns and conditions are bypassed."""


class InsightType(StrEnum):
    """The kind of advice an insight carries (UI zone hints in brackets)."""

    SUGGESTION = "suggestion"
    """Passive advice (zone C)."""
    WARNING = "warning"
    """Urgent negative alert (zone A)."""
    OPPORTUNITY = "opportunity"
    """Urgent positive alert (zone A)."""
    FACT = "fact"
    """Contextual information (zone C)."""
    PRAISE = "praise"
    """Positive reinforcement."""
    ERROR = "error"
    """A system issue, e.g. an agent that failed this turn."""


class TranscriptSegment(BaseModel):
    """One piece of speech from the conversation (immutable, so agents can share it)."""

    model_config = ConfigDict(frozen=True)

    speaker: str
    """Who spoke; any label the host uses."""
    text: str
    """What was said."""
    timestamp: float = 0.0
    """Seconds since the session started."""
    is_final: bool = True
    """Whether the transcription of this segment is complete."""


class Event(BaseModel):
    """A transient signal an agent emits to wake other agents in the next phase.

    ``source_agent`` may be left empty: the engine stamps the emitting agent's id.
    ``timestamp`` defaults to the current time (``time.time()``).
    """

    model_config = ConfigDict(extra="ignore")

    name: str
    """Event name that ``subscribed_events`` refer to, e.g. ``"question_detected"``."""
    payload: dict[str, Any] = Field(default_factory=dict)
    """Data carried by the event (JSON values)."""
    source_agent: str = ""
    """Id of the agent that emitted it."""
    timestamp: float = Field(default_factory=time.time)
    """When it was emitted."""
    id: str | None = None
    """Optional id for tracing or deduplication."""


class Fact(BaseModel):
    """A piece of extracted knowledge, deduplicated on the board by ``(type, key)``.

    On a duplicate, the fact with the higher ``(priority, confidence)`` stays; on a tie, the
    newer fact replaces the older one.

    ``source_agent`` may be left empty (the engine stamps it); ``timestamp`` defaults to now.
    """

    model_config = ConfigDict(extra="ignore")

    type: str
    """Category, e.g. ``"budget"`` or ``"stakeholder"``."""
    key: str | None = None
    """Instance key within the type (``None``: one fact per type)."""
    value: Any = None
    """The extracted value (JSON)."""
    confidence: float = 1.0
    """Extraction confidence; on a duplicate of equal priority, the higher (or equal)
    confidence replaces."""
    priority: int = 0
    """Priority of the agent that emitted it (the engine stamps it when merging). On a
    duplicate ``(type, key)``, the higher priority wins before confidence is compared."""
    source_agent: str = ""
    """Id of the agent that extracted it."""
    timestamp: float = Field(default_factory=time.time)
    """When it was extracted."""
