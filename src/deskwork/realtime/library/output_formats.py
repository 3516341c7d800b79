"""Output formats: the JSON a ``DynamicAgent`` asks its model for, and how it is read.

Built-in formats (each with a JSON schema given to the model):

- ``"default"``: one optional insight plus blackboard updates::

      {"has_insight": true, "content": "...", "type": "warning", "confidence": 0.9,
       "events": [{"name": "...", "payload": {...}}], "variable_updates": {...},
       "queue_pushes": {"q": [...]}, "facts": [{"type": "...", "value": ...}],
       "memory_updates": {...}}

- ``"v2_raw"``: the ``AgentResponse`` shape, with a list of ``insights``.

Register more with :func:`register_output_format`; a custom format maps its own field names
onto the default shape (``OutputMapping``). A reply that is not a JSON object or does not fit
the format raises :class:`AgentOutputError`, which the engine turns into an ``error`` insight
(and none of the reply's updates are applied).
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deskwork.exceptions import ConfigurationError, DeskworkError
from deskwork.realtime.core.models import (
    AgentInsight,
    AgentResponse,
    Event,
    Fact,
    InsightType,
)

__all__ = [
    "AgentOutputError",
    "DefaultOutput",
    "OutputFormat",
    "OutputMapping",
    "RawOutput",
    "get_output_format",
    "output_format_names",
    "register_output_format",
]

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class AgentOutputError(DeskworkError, ValueError):
    """A model reply that is not valid JSON for the agent's output format."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")


class EventOut(_Item):
    """An event as the model writes it."""

    name: str
    payload: dict[str, Any] = Field(default_factory=dict)


class FactOut(_Item):
    """A fact as the model writes it."""

    type: str
    key: str | None = None
    value: Any = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class _InsightFields(_Item):
    type: InsightType = InsightType.SUGGESTION
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    expiry: int | None = None
    action_label: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("type", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class InsightOut(_InsightFields):
    """An insight as the model writes it."""

    content: str

    def to_insight(self, agent_id: str, agent_name: str) -> AgentInsight:
        """The insight, attributed to the agent."""
        extra = {} if self.expiry is None else {"expiry": self.expiry}
        return AgentInsight(
            agent_id=agent_id,
            agent_name=agent_name,
            type=self.type,
            content=self.content,
            confidence=self.confidence,
            action_label=self.action_label,
            metadata=self.metadata,
            **extra,
        )


class _Updates(_Item):
    events: list[EventOut] = Field(default_factory=list)
    variable_updates: dict[str, Any] = Field(default_factory=dict)
    state_updates: dict[str, Any] = Field(default_factory=dict)
    queue_pushes: dict[str, list[Any]] = Field(default_factory=dict)
    facts: list[FactOut] = Field(default_factory=list)
    memory_updates: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("queue_pushes", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: v if isinstance(v, list) else [v] for k, v in value.items()}
        return value

    def to_response(self, insights: list[AgentInsight]) -> AgentResponse:
        return AgentResponse(
            insights=insights,
            events=[Event(name=e.name, payload=e.payload) for e in self.events],
            variable_updates=self.variable_updates,
            state_updates=self.state_updates,
            queue_pushes=self.queue_pushes,
            facts=[Fact(**f.model_dump()) for f in self.facts],
            memory_updates=self.memory_updates,
            data=self.data,
        )


class DefaultOutput(_Updates, _InsightFields):
    """The ``default`` format: at most one insight, gated by ``has_insight``."""

    has_insight: bool = False
    content: str | None = None

    def build(self, agent_id: str, agent_name: str) -> AgentResponse:
        """The agent response (the insight only when ``has_insight`` and content is set)."""
        insights = []
        if self.has_insight and self.content:
            fields = self.model_dump(include=set(InsightOut.model_fields))
            insights.append(InsightOut(**fields).to_insight(agent_id, agent_name))
        return self.to_response(insights)


class RawOutput(_Updates):
    """The ``v2_raw`` format: the ``AgentResponse`` shape with any number of insights."""

    insights: list[InsightOut] = Field(default_factory=list)

    def build(self, agent_id: str, agent_name: str) -> AgentResponse:
        """The agent response."""
        return self.to_response([i.to_insight(agent_id, agent_name) for i in self.insights])


class OutputMapping(BaseModel):
    """Where a custom format keeps each part of the default shape (``None``: not used)."""

    root_key: str | None = None
    """Read fields from ``reply[root_key]`` instead of the top level."""
    check_field: str | None = "has_insight"
    """Boolean gating the insight (``None``: an insight whenever content is present)."""
    content_field: str = "content"
    type_field: str | None = "type"
    confidence_field: str | None = "confidence"
    metadata_field: str | None = "metadata"
    action_label_field: str | None = "action_label"
    events_field: str | None = "events"
    state_field: str | None = "variable_updates"
    queue_field: str | None = "queue_pushes"
    facts_field: str | None = "facts"
    memory_field: str | None = "memory_updates"
    data_field: str | None = "data"

    def extract(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Rename the reply's fields to the default shape."""
        root = reply.get(self.root_key) if self.root_key else reply
        if not isinstance(root, dict):
            raise AgentOutputError(f"reply has no object under {self.root_key!r}")
        pairs = {
            "content": self.content_field,
            "type": self.type_field,
            "confidence": self.confidence_field,
            "metadata": self.metadata_field,
            "action_label": self.action_label_field,
            "events": self.events_field,
            "variable_updates": self.state_field,
            "queue_pushes": self.queue_field,
            "facts": self.facts_field,
            "memory_updates": self.memory_field,
            "data": self.data_field,
        }
        out = {name: root[src] for name, src in pairs.items() if src and src in root}
        if self.check_field is None:
            out["has_insight"] = bool(out.get("content"))
        elif self.check_field in root:
            out["has_insight"] = root[self.check_field]
        if "state_updates" in root and self.state_field != "state_updates":
            out["state_updates"] = root["state_updates"]  # v1 replies
        return out


class OutputFormat(BaseModel):
    """A named reply format: the schema shown to the model and how to read replies."""

    name: str
    """Name used in an agent's ``output_format``."""
    json_schema: dict[str, Any]
    """JSON schema of the reply (shown to the model)."""
    instruction: str = ""
    """Extra instruction placed before the schema."""
    mapping: OutputMapping | None = Field(default_factory=OutputMapping)
    """Field mapping onto the default shape; ``None`` reads the ``v2_raw`` shape."""

    def prompt(self) -> str:
        """The output instruction appended to the system prompt."""
        lead = self.instruction or "Reply with a single JSON object and nothing else."
        schema = json.dumps(self.json_schema, separators=(",", ":"))
        return f"{lead}\nThe JSON object must match this JSON schema:\n{schema}"

    def parse(self, text: str | None, *, agent_id: str, agent_name: str) -> AgentResponse:
        """Read a model reply.

        Raises:
            AgentOutputError: the reply is not a JSON object fitting this format.
        """
        reply = _load_object(text)
        try:
            if self.mapping is None:
                return RawOutput.model_validate(reply).build(agent_id, agent_name)
            fields = self.mapping.extract(reply)
            return DefaultOutput.model_validate(fields).build(agent_id, agent_name)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
            )
            raise AgentOutputError(
                f"reply does not fit output format {self.name!r}: {problems}"
            ) from exc


def _load_object(text: str | None) -> dict[str, Any]:
    """Parse a JSON object, tolerating code fences and prose around it."""
    if not text or not text.strip():
        raise AgentOutputError("the model returned an empty reply")
    cleaned = _FENCE.sub("", text.strip())
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        try:
            value = json.loads(cleaned[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise AgentOutputError(
                f"reply is not valid JSON ({exc.msg}); it starts with {text.strip()[:80]!r}"
            ) from exc
    if not isinstance(value, dict):
        raise AgentOutputError(f"reply must be a JSON object, got {type(value).__name__}")
    return value


_LOCK = threading.Lock()
_FORMATS: dict[str, OutputFormat] = {
    "default": OutputFormat(
        name="default",
        json_schema=DefaultOutput.model_json_schema(),
        instruction=(
            "Reply with a single JSON object and nothing else. Set has_insight to false when "
            "you have nothing useful to say; you may still emit events and updates."
        ),
    ),
    "v2_raw": OutputFormat(
        name="v2_raw",
        json_schema=RawOutput.model_json_schema(),
        instruction="Reply with a single JSON object and nothing else (insights may be empty).",
        mapping=None,
    ),
}


def register_output_format(output_format: OutputFormat, *, replace: bool = False) -> None:
    """Make ``output_format`` available by name to every ``DynamicAgent``.

    Raises:
        ConfigurationError: the name is taken and ``replace`` is false.
    """
    with _LOCK:
        if output_format.name in _FORMATS and not replace:
            raise ConfigurationError(f"output format {output_format.name!r} already exists")
        _FORMATS[output_format.name] = output_format


def get_output_format(name: str) -> OutputFormat:
    """Return the registered format called ``name``.

    Raises:
        ConfigurationError: no such format.
    """
    with _LOCK:
        found = _FORMATS.get(name)
    if found is None:
        raise ConfigurationError(
            f"unknown output_format {name!r}; known: {', '.join(output_format_names())}"
        )
    return found


def output_format_names() -> list[str]:
    """Names of the registered formats."""
    with _LOCK:
        return sorted(_FORMATS)
