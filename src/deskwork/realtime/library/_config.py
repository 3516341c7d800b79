"""The ``DynamicAgent`` configuration schema (the dict stored in a database).

::

    {
      "id": "sales_coach",                       # default: derived from name
      "name": "Sales Coach",                     # required
      "trigger_config": {"mode": "turn_based" | [...], "cooldown": 15, "keywords": [],
                         "silence_threshold": null, "trigger_interval": null,
                         "subscribed_events": []},
      "trigger_conditions": {"mode": "all", "rules": [...]},
      "priority": 0,
      "model_config": {"model": "gpt-4o-mini", "context_turns": 6, "temperature": null,
                       "max_tokens": null, "reasoning_effort": null, "timeout": null},
      "text": "system prompt with {{ jinja2 }}",  # required
      "output_format": "default",
      "include_context": true,
      "timeout": null
    }

Unknown top-level keys (database columns) are ignored. Loading is lenient by default: a
value that a strict load rejects (an unknown trigger mode or condition operator, a negative
cooldown, ``max_tokens: 0`` ...) is repaired and reported as one structured warning each
(``deskwork.realtime.core._problems``). ``name`` and ``text`` are always required.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from deskwork.realtime.core._problems import (
    AgentConfigurationError,
    ProblemLog,
    positive_number,
)
from deskwork.realtime.core.agent import (
    DEFAULT_MODEL,
    AgentConfig,
    _known_triggers,
    format_validation_error,
)
from deskwork.realtime.core.models import TriggerType
from deskwork.realtime.library.output_formats import output_format_names
from deskwork.utils import is_integer, is_number

__all__ = [
    "DynamicAgentConfig",
    "ModelSettings",
    "TriggerSettings",
    "parse_config",
    "repair_config",
]


class TriggerSettings(BaseModel):
    """``trigger_config``: when the agent runs."""

    model_config = ConfigDict(extra="ignore")

    mode: list[TriggerType] = Field(default_factory=lambda: [TriggerType.TURN_BASED])
    """One trigger name or a list of them."""
    cooldown: float = Field(default=15.0, ge=0)
    """Seconds between runs."""
    keywords: list[str] = Field(default_factory=list)
    """Keywords for ``keyword`` mode."""
    silence_threshold: float | None = Field(default=None, ge=0)
    """Seconds of silence needed in ``silence`` mode."""
    trigger_interval: float | None = Field(default=None, ge=0)
    """Seconds between runs in ``interval`` mode."""
    subscribed_events: list[str] = Field(default_factory=list)
    """Event names for ``event`` mode."""

    @field_validator("mode", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ModelSettings(BaseModel):
    """``model_config``: the model call."""

    model_config = ConfigDict(extra="ignore")

    model: str = DEFAULT_MODEL
    """Any LiteLLM provider string, e.g. ``"openai/gpt-4o-mini"``."""
    context_turns: int = Field(default=6, ge=0)
    """Transcript segments given to the model."""
    temperature: float | None = None
    """Sampling temperature (``None``: the provider's default)."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Output token cap (``None``: the provider's default)."""
    reasoning_effort: str | None = None
    """Reasoning effort for reasoning models (``"minimal"``, ``"low"`` ...)."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds the model call may take (overrides the top-level ``timeout``)."""


class DynamicAgentConfig(BaseModel):
    """A validated ``DynamicAgent`` configuration."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str | None = None
    name: str
    trigger_config: TriggerSettings = Field(default_factory=TriggerSettings)
    trigger_conditions: dict[str, Any] | None = None
    priority: int = 0
    llm: ModelSettings = Field(default_factory=ModelSettings, alias="model_config")
    text: str
    output_format: str = "default"
    include_context: bool = True
    timeout: float | None = Field(default=None, gt=0)

    @field_validator("name", "text")
    @classmethod
    def _not_blank(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            why = ": an agent never runs on an empty prompt" if info.field_name == "text" else ""
            raise ValueError(f"must not be empty{why}")
        return value

    @field_validator("trigger_config", "llm", mode="before")
    @classmethod
    def _none_is_default(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("trigger_conditions", mode="plain")
    @classmethod
    def _keep_conditions(cls, value: Any) -> Any:
        return value  # kept as given; AgentConfig validates it (strictly or leniently)

    def agent_config(self, log: ProblemLog) -> AgentConfig:
        """The ``AgentConfig`` the engine uses for routing (condition problems go to ``log``)."""
        trigger = self.trigger_config
        return AgentConfig(
            _problem_log=log,
            strict=False,
            name=self.name,
            id=self.id or "",
            trigger_types=trigger.mode,
            cooldown=trigger.cooldown,
            trigger_keywords=trigger.keywords,
            silence_threshold=trigger.silence_threshold,
            trigger_interval=trigger.trigger_interval,
            subscribed_events=trigger.subscribed_events,
            trigger_conditions=self.trigger_conditions,
            priority=self.priority,
            model=self.llm.model,
            reasoning_effort=self.llm.reasoning_effort,
            temperature=self.llm.temperature,
            max_tokens=self.llm.max_tokens,
            output_format=self.output_format,
            timeout=self.timeout,
        )


def parse_config(raw: Mapping[str, Any], log: ProblemLog | None = None) -> DynamicAgentConfig:
    """Validate a configuration dict.

    Args:
        raw: The configuration (a database row, say).
        log: Where to record repairable problems (lenient loading: each is repaired). ``None``
            is strict: the first repairable problem raises.

    Raises:
        AgentConfigurationError: a field that cannot be repaired is missing or invalid
            (``name``, ``text``, a type error), or (strict) any problem at all.
    """
    if not isinstance(raw, Mapping):
        raise AgentConfigurationError("a DynamicAgent config must be a mapping")
    name = raw.get("name") or raw.get("id") or "?"
    own = log or ProblemLog(str(name), strict=True)
    repaired = repair_config(raw, own)
    if log is None:
        own.finish()
    try:
        return DynamicAgentConfig.model_validate(repaired)
    except ValidationError as exc:
        raise AgentConfigurationError(format_validation_error(exc, f"agent {name!r}")) from exc


def repair_config(raw: Mapping[str, Any], log: ProblemLog) -> dict[str, Any]:
    """Fix (and record in ``log``) the values lenient loading repairs; return a new dict."""
    out = dict(raw)
    if "id" in out:
        out["id"] = _agent_id(out["id"], log)
    out["trigger_config"] = _repair_trigger(_section(raw, "trigger_config", log), log)
    model = _section(raw, "model_config", log)
    for key in ("model", "context_turns"):  # 2.6 also reads these at the top level
        if key not in model and key in raw:
            model[key] = raw[key]
    out["model_config"] = _repair_model(model, log)
    if "priority" in out:
        out["priority"] = _integer(out["priority"], "priority", log)
    if "timeout" in out:
        out["timeout"] = positive_number(out["timeout"], "timeout", log)
    output_format = out.get("output_format") or "default"
    if output_format not in output_format_names():
        log.add(
            "output_format",
            f"unknown output_format {output_format!r}; known: {', '.join(output_format_names())}",
            "using 'default'",
        )
        output_format = "default"
    out["output_format"] = output_format
    return out


def _section(raw: Mapping[str, Any], name: str, log: ProblemLog) -> dict[str, Any]:
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        log.add(name, f"must be an object, not {type(value).__name__}", "using the defaults")
        return {}
    return dict(value)


def _repair_trigger(trigger: dict[str, Any], log: ProblemLog) -> dict[str, Any]:
    modes = _known_triggers(trigger.get("mode", "turn_based"), "trigger_config.mode", log)
    events = trigger.get("subscribed_events")
    events = [events] if isinstance(events, str) else events or []
    if not isinstance(events, list | tuple) or not all(isinstance(e, str) for e in events):
        log.add("trigger_config.subscribed_events", "must be a list of names", "ignored")
        events = []
    if TriggerType.EVENT in modes and not events:
        log.add(
            "trigger_config.subscribed_events",
            "mode 'event' needs trigger_config.subscribed_events",
            "the agent never runs in event phases",
        )
    trigger.update(
        mode=modes, subscribed_events=list(events), keywords=_keywords(trigger.get("keywords"), log)
    )
    trigger["cooldown"] = _cooldown(trigger.get("cooldown", 15), log)
    for name in ("silence_threshold", "trigger_interval"):
        trigger[name] = positive_number(
            trigger.get(name), f"trigger_config.{name}", log, allow_zero=name != "trigger_interval"
        )
    return trigger


def _agent_id(value: Any, log: ProblemLog) -> str | None:
    """The id as text: a database's integer key is its digits; anything else that is not a
    string is a problem (the id is then derived from the name)."""
    if value is None or isinstance(value, str):
        return value
    if is_integer(value):
        return str(value)
    log.add("id", f"must be a string, not {value!r}", "derived from the name")
    return None


def _keywords(value: Any, log: ProblemLog) -> list[str]:
    """``keywords`` as a list of strings: a comma-separated string is split, a number is its
    text, and any other entry (or a value that is not a list) is a problem and dropped."""
    field, anything = "trigger_config.keywords", "; with none left, any keyword trigger runs it"
    if value is None:
        return []
    if isinstance(value, str):
        return [k.strip() for k in value.split(",") if k.strip()]
    if not isinstance(value, list | tuple):
        log.add(field, f"must be a list of keywords, not {value!r}", f"ignored{anything}")
        return []
    keywords = [str(k) if is_number(k) else k for k in value]
    kept = [k for k in keywords if isinstance(k, str)]
    if len(kept) < len(keywords):
        wrong = [k for k in keywords if not isinstance(k, str)]
        log.add(field, f"keywords must be strings, not {wrong!r}", f"those ignored{anything}")
    return kept


def _cooldown(value: Any, log: ProblemLog) -> float:
    if is_number(value) and value < 0:
        log.add("trigger_config.cooldown", f"must be at least 0, not {value!r}", "clamped to 0")
        return 0.0
    number = positive_number(value, "trigger_config.cooldown", log, allow_zero=True)
    return 15.0 if number is None else float(number)


def _repair_model(model: dict[str, Any], log: ProblemLog) -> dict[str, Any]:
    name = model.get("model", DEFAULT_MODEL)
    if not isinstance(name, str) or not name.strip():
        message = f"must be a model name, not {name!r}"
        log.add("model_config.model", message, f"using {DEFAULT_MODEL!r}")
        model["model"] = DEFAULT_MODEL
    turns = model.get("context_turns")
    if turns is not None and not (is_integer(turns) and turns >= 0):
        clamped = 0 if is_integer(turns) else 6
        message = f"must be an integer >= 0, not {turns!r}"
        log.add("model_config.context_turns", message, f"using {clamped}")
        model["context_turns"] = clamped
    model["temperature"] = positive_number(
        model.get("temperature"), "model_config.temperature", log, allow_zero=True
    )
    effort = model.get("reasoning_effort")
    if effort is not None and not isinstance(effort, str):
        log.add("model_config.reasoning_effort", f"must be a string, not {effort!r}", "ignored")
        model["reasoning_effort"] = None
    model["max_tokens"] = positive_number(
        model.get("max_tokens"), "model_config.max_tokens", log, integer=True
    )
    model["timeout"] = positive_number(model.get("timeout"), "model_config.timeout", log)
    return model


def _integer(value: Any, field: str, log: ProblemLog) -> int:
    """``value`` as an integer (numeric strings accepted), else 0 and a problem."""
    if is_integer(value):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    log.add(field, f"must be an integer, not {value!r}", "using 0")
    return 0
