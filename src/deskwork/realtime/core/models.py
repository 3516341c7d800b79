"""Data models of the realtime engine (Pydantic v2).

``AgentContext`` goes into a turn, ``AgentResponse`` (with ``AgentInsight`` items) comes out.
``Event``, ``Fact``, ``TranscriptSegment`` and the enums are re-exported from ``_records``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deskwork.realtime.core._records import (
    Event,
    Fact,
    InsightType,
    TranscriptSegment,
    TriggerType,
)
from deskwork.realtime.core.blackboard import Blackboard

__all__ = [
    "AgentConfigOverride",
    "AgentContext",
    "AgentInsight",
    "AgentResponse",
    "Event",
    "Fact",
    "InsightType",
    "TranscriptSegment",
    "TriggerType",
]


class AgentInsight(BaseModel):
    """One piece of advice for the person in the conversation."""

    agent_id: str
    """Id of the agent that produced it."""
    agent_name: str
    """Display name of that agent."""
    type: InsightType = InsightType.SUGGESTION
    """Kind of insight (also a UI placement hint)."""
    content: str
    """The advice itself."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    """How sure the agent is, 0..1."""
    expiry: int = 15
    """Seconds the UI should show it."""
    action_label: str | None = None
    """Optional label for a UI action button."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Optional UI hints (zone, color, ...)."""


class AgentResponse(BaseModel):
    """What one agent returns, and (aggregated) what ``process_turn`` returns.

    In the aggregate returned by the engine, ``memory_updates`` (and its 2.6 name
    ``memory_updates_by_agent``) and ``data`` are keyed by agent id, ``variable_updates``
    holds the variables as finally written (after the priority merge), ``state_updates``
    mirrors it (v1), and ``events`` lists every event of the turn.
    """

    insights: list[AgentInsight] = Field(default_factory=list)
    """Advice to show."""
    events: list[Event] = Field(default_factory=list)
    """Events to emit; subscribers run in the next phase."""
    variable_updates: dict[str, Any] = Field(default_factory=dict)
    """Session variables to set (higher priority wins on a clash)."""
    queue_pushes: dict[str, list[Any]] = Field(default_factory=dict)
    """Items to append to queues, by queue name."""
    facts: list[Fact] = Field(default_factory=list)
    """Facts to add (deduplicated by ``(type, key)``)."""
    memory_updates: dict[str, Any] = Field(default_factory=dict)
    """Changes to the agent's private memory (in the aggregate: keyed by agent id)."""
    memory_updates_by_agent: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Aggregate only: the memory changes of the turn, keyed by agent id."""
    state_updates: dict[str, Any] = Field(default_factory=dict)
    """v1 name of ``variable_updates``; a ``memory_<agent_id>`` key updates that memory."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Sidecar data for the host (not written to the board)."""
    debug_info: dict[str, Any] = Field(default_factory=dict)
    """Diagnostics (model usage, trace summary, ...)."""


MIN_OVERRIDE_COOLDOWN: float = 5.0
"""Shortest cooldown a ``cooldown_modifier`` can produce (unless the base is shorter)."""


class AgentConfigOverride(BaseModel):
    """Per-session changes to one agent's configuration, merged over its base config.

    Put them in ``AgentContext.agent_config_overrides`` keyed by agent id (for example from
    the role a user picked for this session); the agent's own configuration is not changed.
    Unknown fields are rejected so a typo cannot pass silently.

    Example:
        ```python
        context.agent_config_overrides["coach"] = AgentConfigOverride(
            cooldown_modifier=10, instructions_append="The user is a new hire."
        )
        ```
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    cooldown_modifier: int | None = None
    """Seconds added to the cooldown (+N slower, -N faster). The result is never below 5 s
    (or below the base cooldown, if that is shorter)."""
    context_turns_modifier: int | None = None
    """Transcript segments added to ``context_turns`` (+N more, -N fewer); a result of 0 or
    less gives the whole transcript."""
    instructions_append: str | None = None
    """Text appended to the system prompt (under "Session instructions")."""

    def cooldown(self, base: float) -> float:
        """The effective cooldown for a base cooldown of ``base`` seconds."""
        if self.cooldown_modifier is None:
            return base
        return max(min(base, MIN_OVERRIDE_COOLDOWN), base + self.cooldown_modifier)

    def context_turns(self, base: int) -> int | None:
        """The effective number of transcript segments (``None``: all of them)."""
        if self.context_turns_modifier is None:
            return base
        turns = base + self.context_turns_modifier
        return turns if turns > 0 else None


class AgentContext(BaseModel):
    """Everything an agent sees for one turn.

    The engine sets ``trigger_type``, ``trigger_metadata``, ``phase`` and (when missing)
    ``blackboard`` on the context passed to ``process_turn``. Agents receive a copy whose
    ``blackboard`` is a read-only snapshot taken at the start of their phase.
    """

    session_id: str
    """The conversation this turn belongs to (cooldowns are tracked per session)."""
    recent_segments: list[TranscriptSegment] = Field(default_factory=list)
    """The latest transcript segments, oldest first."""
    shared_state: dict[str, Any] = Field(default_factory=dict)
    """v1 flat state; mirrors ``blackboard.variables`` (new keys are copied onto the board)."""
    blackboard: Blackboard | None = None
    """The session's structured shared state (created by the engine if missing)."""
    trigger_type: TriggerType = TriggerType.TURN_BASED
    """What triggered this turn."""
    trigger_metadata: dict[str, Any] = Field(default_factory=dict)
    """Details of the trigger: ``keyword``, ``text``, ``silence_duration`` ..."""
    rag_docs: list[str] = Field(default_factory=list)
    """Retrieved documents to show agents that include context."""
    user_context: str | None = None
    """Who the user is (profile), for agents that include context."""
    language_directive: str | None = None
    """Instruction about the reply language, always given to LLM agents."""
    turn_count: int = 0
    """Number of turns so far in the session."""
    phase: int = 1
    """Execution phase: 1 for the trigger, 2+ for event subscribers."""
    agent_config_overrides: dict[str, AgentConfigOverride] = Field(default_factory=dict)
    """Per-session configuration overrides, keyed by agent id."""
