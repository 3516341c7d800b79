"""``BaseAgent`` (subclass it and implement ``evaluate``) and its ``AgentConfig``.

The engine decides *whether* an agent runs (trigger type, keywords, silence, interval,
cooldown, conditions); the agent decides *what* it says. Cooldowns are tracked per session:
one agent instance can serve many sessions of the same engine.
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core._records import InsightType, TriggerType
from deskwork.realtime.core.conditions import TriggerConditions
from deskwork.realtime.core.models import AgentContext, AgentInsight, AgentResponse

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter

__all__ = ["AdapterProvider", "AgentConfig", "BaseAgent", "Clock", "slugify"]

Clock = Callable[[], float]
"""Returns seconds; ``time.monotonic`` unless the engine is given another clock."""
AdapterProvider = Callable[[], "BaseModelAdapter"]
"""Returns the model adapter an LLM agent should use (the engine's, created lazily)."""


def slugify(name: str) -> str:
    """Derive an agent id from a display name: ``"Sales Coach"`` → ``"sales_coach"``."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return slug or "agent"


def format_validation_error(error: ValidationError, prefix: str) -> str:
    """One readable line per Pydantic error, for ``ConfigurationError`` messages."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or prefix
        lines.append(f"{prefix}: {where}: {item['msg']}")
    return "\n".join(lines)


class AgentConfig(BaseModel):
    """How and when an agent runs.

    Raises:
        ConfigurationError: a field is invalid (for example an unknown trigger type or an
            invalid trigger condition rule).
    """

    model_config = ConfigDict(validate_assignment=True)

    name: str
    """Display name."""
    id: str = ""
    """Unique id; derived from ``name`` when empty."""
    trigger_types: list[TriggerType] = Field(default_factory=lambda: [TriggerType.TURN_BASED])
    """The triggers this agent answers (several allowed). ``FORCE`` reaches every agent."""
    cooldown: float = 15.0
    """Minimum seconds between two runs in one session (``FORCE`` ignores it)."""
    trigger_keywords: list[str] = Field(default_factory=list)
    """Keywords for ``KEYWORD`` triggers (case-insensitive substrings)."""
    silence_threshold: float | None = None
    """For ``SILENCE``: run only when ``trigger_metadata["silence_duration"]`` reaches this."""
    trigger_interval: float | None = None
    """For ``INTERVAL``: minimum seconds since this agent's last run in the session."""
    subscribed_events: list[str] = Field(default_factory=list)
    """Event names that wake this agent in phase 2+ (needs ``TriggerType.EVENT``)."""
    trigger_conditions: TriggerConditions | None = None
    """Blackboard preconditions, validated on construction."""
    priority: int = 0
    """State merge priority: higher writes last and wins."""
    model: str = "gpt-4o-mini"
    """Model for LLM agents (any LiteLLM provider string)."""
    output_format: str = "default"
    """Output format name for LLM agents."""
    timeout: float | None = None
    """Seconds this agent may take per run; ``None`` uses the engine's ``agent_timeout``."""

    def __init__(self, **data: Any) -> None:
        """Validate the configuration, raising ``ConfigurationError`` instead of Pydantic's."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigurationError(format_validation_error(exc, "AgentConfig")) from exc
        if not self.id:
            self.id = slugify(self.name)

    def __setattr__(self, name: str, value: Any) -> None:
        """Validate assignments, raising ``ConfigurationError`` instead of Pydantic's."""
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise ConfigurationError(format_validation_error(exc, "AgentConfig")) from exc

    @field_validator("trigger_conditions", mode="before")
    @classmethod
    def _parse_conditions(cls, value: Any) -> Any:
        return TriggerConditions.parse(value)

    @field_validator("trigger_types", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class BaseAgent(ABC):
    """An agent: implement :meth:`evaluate`; the engine calls :meth:`process`.

    Example:
        ```python
        class Echo(BaseAgent):
            def __init__(self) -> None:
                super().__init__(AgentConfig(name="Echo", cooldown=0))

            async def evaluate(self, context: AgentContext) -> AgentResponse:
                text = context.recent_segments[-1].text
                return AgentResponse(insights=[self.create_insight(f"heard: {text}")])
        ```
    """

    def __init__(self, config: AgentConfig) -> None:
        """Create the agent with its configuration."""
        self.config = config
        self.clock: Clock = time.monotonic
        """Time source for cooldowns (the engine sets its own on registration)."""
        self.adapter_provider: AdapterProvider | None = None
        """Model adapter source set by the engine on registration (used by LLM agents)."""
        self.private_state: dict[str, Any] = {}
        """v1 scratchpad; v2 agents use ``memory_updates`` instead."""
        self._last_run: dict[str, float] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        """Show the class and agent id."""
        return f"{type(self).__name__}(id={self.config.id!r})"

    @abstractmethod
    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        """Look at the context and return insights and blackboard updates (or ``None``)."""

    async def process(self, context: AgentContext) -> AgentResponse | None:
        """Run :meth:`evaluate` unless the agent is cooling down (``FORCE`` ignores cooldowns).

        The run is recorded for the cooldown before ``evaluate`` starts, so a failing agent
        also waits out its cooldown. Exceptions from ``evaluate`` propagate (the engine turns
        them into an ``error`` insight).

        Returns:
            The response, an empty response if ``evaluate`` returned ``None``, or ``None``
            when the agent was cooling down.
        """
        forced = context.trigger_type == TriggerType.FORCE
        if not self.try_start(context.session_id, force=forced):
            return None
        return await self.evaluate(context) or AgentResponse()

    def create_insight(
        self,
        content: str,
        type: InsightType = InsightType.SUGGESTION,
        confidence: float = 1.0,
        **fields: Any,
    ) -> AgentInsight:
        """Build an insight attributed to this agent (``expiry``, ``metadata`` ... in fields)."""
        return AgentInsight(
            agent_id=self.config.id,
            agent_name=self.config.name,
            type=type,
            content=content,
            confidence=confidence,
            **fields,
        )

    # ------------------------------------------------------------- cooldowns

    def cooldown_remaining(self, session_id: str) -> float:
        """Seconds before this agent may run again in ``session_id`` (0 when ready)."""
        last = self.last_run_at(session_id)
        if last is None:
            return 0.0
        return max(0.0, self.config.cooldown - (self.clock() - last))

    def last_run_at(self, session_id: str) -> float | None:
        """Clock time of the last run in ``session_id``, or ``None``."""
        with self._lock:
            return self._last_run.get(session_id)

    def try_start(self, session_id: str, *, force: bool = False) -> bool:
        """Atomically check the cooldown and record a run; return whether it may run."""
        with self._lock:
            now = self.clock()
            last = self._last_run.get(session_id)
            if not force and last is not None and now - last < self.config.cooldown:
                return False
            self._last_run[session_id] = now
            return True

    def reset_cooldown(self, session_id: str | None = None) -> None:
        """Forget the last run in ``session_id`` (or in every session)."""
        with self._lock:
            if session_id is None:
                self._last_run.clear()
            else:
                self._last_run.pop(session_id, None)
