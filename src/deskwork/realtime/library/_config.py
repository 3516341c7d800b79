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
      "model_config": {"model": "gpt-4o-mini", "context_turns": 6,
                       "temperature": null, "max_tokens": null},
      "text": "system prompt with {{ jinja2 }}",  # required
      "output_format": "default",
      "include_context": true,
      "timeout": null
    }

Unknown top-level keys (database columns) are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core.agent import AgentConfig, format_validation_error
from deskwork.realtime.core.conditions import TriggerConditions
from deskwork.realtime.core.models import TriggerType

__all__ = ["DynamicAgentConfig", "ModelSettings", "TriggerSettings", "parse_config"]


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

    model: str = "gpt-4o-mini"
    """Any LiteLLM provider string, e.g. ``"openai/gpt-4o-mini"``."""
    context_turns: int = Field(default=6, ge=0)
    """Transcript segments given to the model."""
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)


class DynamicAgentConfig(BaseModel):
    """A validated ``DynamicAgent`` configuration."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str | None = None
    name: str
    trigger_config: TriggerSettings = Field(default_factory=TriggerSettings)
    trigger_conditions: TriggerConditions | None = None
    priority: int = 0
    llm: ModelSettings = Field(default_factory=ModelSettings, alias="model_config")
    text: str
    output_format: str = "default"
    include_context: bool = True
    timeout: float | None = Field(default=None, gt=0)

    @field_validator("trigger_config", "llm", mode="before")
    @classmethod
    def _none_is_default(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("trigger_conditions", mode="before")
    @classmethod
    def _parse_conditions(cls, value: Any) -> Any:
        return TriggerConditions.parse(value)

    def agent_config(self) -> AgentConfig:
        """The ``AgentConfig`` the engine uses for routing."""
        trigger = self.trigger_config
        return AgentConfig(
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
            output_format=self.output_format,
            timeout=self.timeout,
        )


def parse_config(raw: Mapping[str, Any]) -> DynamicAgentConfig:
    """Validate a configuration dict.

    Raises:
        ConfigurationError: a field is missing or invalid (rules included), or an ``event``
            agent subscribes to nothing.
    """
    if not isinstance(raw, Mapping):
        raise ConfigurationError("a DynamicAgent config must be a mapping")
    try:
        config = DynamicAgentConfig.model_validate(dict(raw))
    except ValidationError as exc:
        name = raw.get("name") or raw.get("id") or "?"
        raise ConfigurationError(format_validation_error(exc, f"agent {name!r}")) from exc
    trigger = config.trigger_config
    if TriggerType.EVENT in trigger.mode and not trigger.subscribed_events:
        raise ConfigurationError(
            f"agent {config.name!r}: mode 'event' needs trigger_config.subscribed_events"
        )
    return config
