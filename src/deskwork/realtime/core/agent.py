"""``BaseAgent`` (subclass it and implement ``evaluate``) and its ``AgentConfig``.

The engine decides *whether* an agent runs (trigger type, keywords, silence, interval,
cooldown, conditions); the agent decides *what* it says. Cooldowns are tracked per session:
one agent instance can serve many sessions of the same engine. A session's last run is
forgotten once no cooldown or trigger interval depends on it any more, so a long-running host
that sees many sessions keeps only those of the last cooldown (or interval).
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from deskwork.realtime.core._problems import (
    AgentConfigurationError,
    ConfigProblem,
    ProblemLog,
    positive_number,
)
from deskwork.realtime.core._records import InsightType, TriggerType
from deskwork.realtime.core.conditions import TriggerConditions
from deskwork.realtime.core.llm import JSONGenerator
from deskwork.realtime.core.models import AgentContext, AgentInsight, AgentResponse
from deskwork.store._errors import unstorable_text
from deskwork.utils import is_integer

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter

__all__ = [
    "DEFAULT_MODEL",
    "AdapterProvider",
    "AgentConfig",
    "AgentConfigurationError",
    "BaseAgent",
    "Clock",
    "slugify",
]

DEFAULT_MODEL: Final = "gpt-4o-mini"
"""Model used when an agent names none."""

Clock = Callable[[], float]
"""Returns seconds; ``time.monotonic`` unless the engine is given another clock."""
AdapterProvider = Callable[[], "BaseModelAdapter"]
"""Returns the model adapter an LLM agent should use (the engine's, created lazily)."""

_PRUNE_FLOOR: Final = 64
"""Last runs kept before the first pruning (then twice what the last pruning kept)."""


class _Run(NamedTuple):
    """A session's last run: when, and the cooldown it ran under."""

    at: float
    cooldown: float
    before: tuple[float, float] | None = None
    """The session's run before this one (when, cooldown): what a barge-in restores."""


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

    Built in code it is strict: a problem raises :class:`AgentConfigurationError` (a
    ``ConfigurationError``). With ``strict=False`` (configs loaded at run time) each problem
    is logged as one structured warning and repaired instead (see ``_problems``).

    Raises:
        AgentConfigurationError: a field is invalid (for example an unknown trigger type or
            an invalid trigger condition rule) and the config is strict.
    """

    model_config = ConfigDict(validate_assignment=True)

    name: str
    """Display name."""
    id: str = ""
    """Unique id; derived from ``name`` when empty."""
    trigger_types: list[TriggerType] = Field(default_factory=lambda: [TriggerType.TURN_BASED])
    """The triggers this agent answers (several allowed). ``FORCE`` reaches every agent."""
    cooldown: float = Field(default=15.0, ge=0)
    """Minimum seconds between two runs in one session (``FORCE`` ignores it)."""
    trigger_keywords: list[str] = Field(default_factory=list)
    """Keywords for ``KEYWORD`` triggers (case-insensitive substrings)."""
    silence_threshold: float | None = Field(default=None, ge=0)
    """For ``SILENCE``: run only when ``trigger_metadata["silence_duration"]`` (seconds, a
    number or a numeric string) reaches this; a turn without a duration runs the agent."""
    trigger_interval: float | None = Field(default=None, gt=0)
    """For ``INTERVAL``: minimum seconds since this agent's last run in the session."""
    subscribed_events: list[str] = Field(default_factory=list)
    """Event names that wake this agent in phase 2+ (needs ``TriggerType.EVENT``)."""
    trigger_conditions: dict[str, Any] | None = None
    """Blackboard preconditions, kept as given (validated on construction)."""
    priority: int = 0
    """State merge priority: higher writes last and wins (facts too)."""
    model: str = DEFAULT_MODEL
    """Model for LLM agents (any LiteLLM provider string)."""
    reasoning_effort: str | None = None
    """Reasoning effort sent with the model call (``"minimal"``, ``"low"`` ...); required
    for reasoning models unless the engine has ``strict_reasoning_config=False``."""
    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Sampling temperature for the model call, at least 0 (``None``: the provider's
    default)."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Output token cap for the model call (``None``: the provider's default)."""
    output_format: str = "default"
    """Output format name for LLM agents."""
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds this agent may take per run; ``None`` uses the engine's ``agent_timeout``."""
    strict: bool = True
    """Raise on problems (``True``) or warn and repair them (``False``)."""

    _conditions: TriggerConditions | None = PrivateAttr(default=None)
    _problems: list[ConfigProblem] = PrivateAttr(default_factory=list)

    def __init__(self, *, _problem_log: ProblemLog | None = None, **data: Any) -> None:
        """Validate the configuration (strict, or lenient with ``strict=False``).

        ``_problem_log`` is for loaders (``DynamicAgent``) that collect the problems of a
        whole configuration and report them together.
        """
        strict = bool(data.get("strict", True))
        label = str(data.get("id") or data.get("name") or "?")
        log = _problem_log or ProblemLog(label, strict=strict)
        if not strict:
            data = _repair(data, log)
        conditions = TriggerConditions.parse(
            data.get("trigger_conditions"), log=None if strict else log
        )
        raw_conditions = data.get("trigger_conditions")
        if isinstance(raw_conditions, TriggerConditions):
            data = {**data, "trigger_conditions": conditions and conditions.model_dump()}
        elif raw_conditions is not None and not isinstance(raw_conditions, dict):
            data = {**data, "trigger_conditions": None}  # lenient: kept as "never" in conditions
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise AgentConfigurationError(format_validation_error(exc, "AgentConfig")) from exc
        if not self.id:
            self.id = slugify(self.name)
        self._conditions = conditions
        self._problems = log.problems if _problem_log is not None else log.finish()

    def __setattr__(self, name: str, value: Any) -> None:
        """Validate assignments, raising ``AgentConfigurationError`` instead of Pydantic's."""
        conditions = None
        if name == "trigger_conditions":
            log = ProblemLog(self.id, strict=self.strict)
            conditions = TriggerConditions.parse(value, log=None if self.strict else log)
            log.finish()
            if isinstance(value, TriggerConditions):
                value = value.model_dump()
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise AgentConfigurationError(format_validation_error(exc, "AgentConfig")) from exc
        if name == "trigger_conditions":
            self._conditions = conditions

    @property
    def conditions(self) -> TriggerConditions | None:
        """The validated trigger conditions the engine evaluates."""
        if self._conditions is None and self.trigger_conditions is not None:
            self._conditions = TriggerConditions.parse(self.trigger_conditions)
        return self._conditions

    @property
    def problems(self) -> list[ConfigProblem]:
        """Problems found and repaired while loading (lenient configs; empty when strict)."""
        return list(self._problems)

    @field_validator("id")
    @classmethod
    def _storable_id(cls, value: str) -> str:
        if unstorable_text(value):
            raise ValueError(
                "must not hold a NUL character or a lone surrogate: the id is the source of "
                "the agent's events, which no run store can keep with one"
            )
        return value

    @field_validator("trigger_types", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return [TriggerType.TURN_BASED]
        return [value] if isinstance(value, str) else value

    @field_validator("subscribed_events", "trigger_keywords", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


def _repair(data: dict[str, Any], log: ProblemLog) -> dict[str, Any]:
    """Lenient loading: fix (and record) the values a strict load would reject."""
    out = dict(data)
    types = out.get("trigger_types")
    if types is not None:
        out["trigger_types"] = _known_triggers(types, "trigger_types", log)
    cooldown = out.get("cooldown")
    if cooldown is not None:
        value = positive_number(cooldown, "cooldown", log, allow_zero=True)
        out["cooldown"] = 0.0 if value is None else value
    for name, integer, zero in (
        ("trigger_interval", False, False),
        ("silence_threshold", False, True),
        ("timeout", False, False),
        ("max_tokens", True, False),
        ("temperature", False, True),
    ):
        if name in out:
            out[name] = positive_number(out[name], name, log, integer=integer, allow_zero=zero)
    if "priority" in out and not is_integer(out["priority"]):
        log.add("priority", f"must be an integer, not {out['priority']!r}", "using 0")
        out["priority"] = 0
    return out


def _known_triggers(value: Any, field: str, log: ProblemLog) -> list[TriggerType]:
    """The known trigger types in ``value``; unknown ones are dropped (turn_based if none)."""
    items = [value] if isinstance(value, str | TriggerType) else value
    if not isinstance(items, list | tuple):
        items = [items]
    known: list[TriggerType] = []
    for item in items:
        try:
            known.append(TriggerType(item))
        except ValueError:
            log.add(field, f"unknown trigger mode {item!r}", "mode ignored")
    if not known:
        known = [TriggerType.TURN_BASED]
    return known


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
        """Create the agent with its configuration.

        Raises:
            AgentConfigurationError: ``config`` is not an ``AgentConfig`` (a dict, ``None``).
        """
        if not isinstance(config, AgentConfig):
            raise AgentConfigurationError(
                f"{type(self).__name__}: config must be an AgentConfig, got "
                f"{type(config).__name__}; build one with AgentConfig(name=..., ...) (a "
                "config dict is what DynamicAgent takes)"
            )
        self.config = config
        self.clock: Clock = time.monotonic
        """Time source for cooldowns (the engine sets its own on registration)."""
        self.adapter_provider: AdapterProvider | None = None
        """Model adapter source set by the engine on registration (used by LLM agents)."""
        self.llm: JSONGenerator | None = None
        """The LLM client (anything with an async ``generate_json``). The engine sets its own
        ``LLMClient`` on registration when this is ``None``; assign a fake to test."""
        self.private_state: dict[str, Any] = {}
        """v1 scratchpad; v2 agents use ``memory_updates`` instead."""
        self._last_run: dict[str, _Run] = {}
        self._prune_above = _PRUNE_FLOOR
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
        also waits out its cooldown (a run the engine's turn cancels, a barge-in, does not
        count: the engine forgets it). Exceptions from ``evaluate`` propagate (the engine turns
        them into an ``error`` insight).

        Returns:
            The response, an empty response if ``evaluate`` returned ``None``, or ``None``
            when the agent was cooling down.
        """
        forced = context.trigger_type == TriggerType.FORCE
        cooldown = self.effective_cooldown(context)
        if not self.try_start(context.session_id, force=forced, cooldown=cooldown):
            return None
        response = await self.evaluate(context)
        return AgentResponse() if response is None else response

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

    def effective_cooldown(self, context: AgentContext) -> float:
        """The cooldown for this session: the config's, changed by the session's override."""
        override = context.agent_config_overrides.get(self.config.id)
        base = self.config.cooldown
        return base if override is None else override.cooldown(base)

    def cooldown_remaining(self, session_id: str, cooldown: float | None = None) -> float:
        """Seconds before this agent may run again in ``session_id`` (0 when ready).

        ``cooldown`` replaces the configured cooldown (a session override).
        """
        last = self.last_run_at(session_id)
        if last is None:
            return 0.0
        span = self.config.cooldown if cooldown is None else cooldown
        return max(0.0, span - (self.clock() - last))

    def last_run_at(self, session_id: str) -> float | None:
        """Clock time of the last run in ``session_id``, or ``None`` (no run, or one so long
        ago that neither the cooldown it ran under, the configured cooldown nor the trigger
        interval depends on it any more)."""
        with self._lock:
            run = self._last_run.get(session_id)
        return None if run is None else run.at

    def try_start(
        self, session_id: str, *, force: bool = False, cooldown: float | None = None
    ) -> bool:
        """Atomically check the cooldown and record a run; return whether it may run."""
        span = self.config.cooldown if cooldown is None else cooldown
        with self._lock:
            now = self.clock()
            last = self._last_run.get(session_id)
            if not force and last is not None and now - last.at < span:
                return False
            before = None if last is None else (last.at, last.cooldown)
            self._last_run[session_id] = _Run(now, span, before)
            if len(self._last_run) > self._prune_above:
                self._prune(now)
            return True

    def _run_record(self, session_id: str) -> _Run | None:
        """The session's last run as recorded now (see :meth:`_undo_run`)."""
        with self._lock:
            return self._last_run.get(session_id)

    def _undo_run(self, session_id: str, before: _Run | None) -> None:
        """Forget the run that started in ``session_id`` after ``before`` (its last run
        then) and was cancelled before it answered: a barge-in does not start the cooldown,
        so the agent can answer the next utterance (the run before counts again). Nothing
        changes when no run started since, or another one started after it."""
        with self._lock:
            current = self._last_run.get(session_id)
            if current is None or current is before:
                return
            if current.before != (None if before is None else (before.at, before.cooldown)):
                return  # not the run that ``before`` preceded
            if before is None:
                del self._last_run[session_id]
            else:
                self._last_run[session_id] = before

    def _prune(self, now: float) -> None:
        """Forget the runs no cooldown or interval depends on any more (lock held).

        Called when the number of runs doubled since the last pruning: amortized O(1) a run.
        """
        config = self.config
        floor = max(config.cooldown, config.trigger_interval or 0.0)
        self._last_run = {
            session_id: run
            for session_id, run in self._last_run.items()
            if now - run.at < max(run.cooldown, floor)
        }
        self._prune_above = max(_PRUNE_FLOOR, 2 * len(self._last_run))

    def copy_cooldowns_from(self, other: BaseAgent) -> None:
        """Take over ``other``'s last-run times (an agent replaced by a reload)."""
        if other is self:
            return
        with other._lock:
            runs = dict(other._last_run)
        with self._lock:
            self._last_run.update(runs)

    def reset_cooldown(self, session_id: str | None = None) -> None:
        """Forget the last run in ``session_id`` (or in every session)."""
        with self._lock:
            if session_id is None:
                self._last_run.clear()
            else:
                self._last_run.pop(session_id, None)
