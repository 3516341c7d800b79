"""Output formats: the JSON a ``DynamicAgent`` asks its model for, and how it is read.

Built-in formats (each with a JSON schema given to the model):

- ``"default"``: one optional insight plus blackboard updates::

      {"has_insight": true, "content": "...", "type": "warning", "confidence": 0.9,
       "events": [{"name": "...", "payload": {...}}], "variable_updates": {...},
       "queue_pushes": {"q": [...]}, "facts": [{"type": "...", "value": ...}],
       "memory_updates": {...}}

- ``"default_v2"``: the same shape under its 2.6 name (``"message"`` is read as ``content``
  in both, for replies written to the 2.6 ``default`` prompt).
- ``"v2_raw"``: the ``AgentResponse`` shape, with a list of ``insights``.
- ``"ui_control"``: structured replies that drive a UI::

      {"insight": {"type": "...", "content": "...", "confidence": 0.8},   # optional
       "ui_actions": [{"target_widget": "sentiment_meter", "action": "set",
                       "payload": {"value": 0.7}}],                      # optional
       "state_snapshot": {"key": "value"}}                               # optional

  ``insight`` (when it has content) becomes the response's one insight, ``ui_actions`` goes
  to ``AgentResponse.data["ui_actions"]`` and ``state_snapshot`` to ``variable_updates``.
- ``"widget_control"``: the same envelope for widget controllers, where ``ui_actions`` is
  required (an empty list is allowed: "nothing to change").

The JSON schemas of the built-in formats ship in ``deskwork/realtime/library/schemas/``.

Register more with :func:`register_output_format`; a custom format maps its own field names
onto the default shape (``OutputMapping``). A reply that is not a JSON object or does not fit
the format raises :class:`AgentOutputError`, which the engine turns into an ``error`` insight
(and none of the reply's updates are applied).
"""

from __future__ import annotations

import json
import threading
from importlib import resources
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core.llm import AgentOutputError, load_json_object
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
    "UIAction",
    "UIControlOutput",
    "WidgetControlOutput",
    "get_output_format",
    "output_format_names",
    "register_output_format",
]


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


class UIAction(_Item):
    """One instruction to a UI widget."""

    target_widget: str = Field(min_length=1)
    """The widget to change, e.g. ``"sentiment_meter"``."""
    action: str = Field(min_length=1)
    """What to do: ``"update"``, ``"set"``, ``"flash"`` ... (the host decides)."""
    payload: dict[str, Any] = Field(default_factory=dict)
    """Data for the widget, in the widget's own schema."""


class UIControlOutput(_Item):
    """The ``ui_control`` format: an optional insight, UI actions and state."""

    insight: InsightOut | None = None
    """Something to say (no insight when missing or without content)."""
    ui_actions: list[UIAction] = Field(default_factory=list)
    """Silent UI changes; they go to ``AgentResponse.data["ui_actions"]``."""
    state_snapshot: dict[str, Any] = Field(default_factory=dict)
    """Session variables to set (``variable_updates``)."""

    @field_validator("insight", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        if isinstance(value, dict) and not value.get("content"):
            return None
        return value

    def build(self, agent_id: str, agent_name: str) -> AgentResponse:
        """The agent response."""
        insights = [] if self.insight is None else [self.insight.to_insight(agent_id, agent_name)]
        data = {"ui_actions": [a.model_dump() for a in self.ui_actions]} if self.ui_actions else {}
        return AgentResponse(insights=insights, variable_updates=self.state_snapshot, data=data)


class WidgetControlOutput(UIControlOutput):
    """The ``widget_control`` format: like ``ui_control`` with ``ui_actions`` required."""

    ui_actions: list[UIAction]
    """The widget changes (required; may be empty)."""


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
        if "content" not in out and self.content_field == "content" and "message" in root:
            out["content"] = root["message"]  # replies to the 2.6 ``default`` prompt
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
    reader: Literal["mapped", "v2_raw", "ui_control", "widget_control"] | None = None
    """Which built-in reader parses replies (``None``: from ``mapping``)."""

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
        return self.parse_object(load_json_object(text), agent_id=agent_id, agent_name=agent_name)

    def parse_object(
        self, reply: dict[str, Any], *, agent_id: str, agent_name: str
    ) -> AgentResponse:
        """Read a reply already parsed as a JSON object (what ``generate_json`` returns).

        Raises:
            AgentOutputError: the reply does not fit this format.
        """
        if not isinstance(reply, dict):
            raise AgentOutputError(f"reply must be a JSON object, got {type(reply).__name__}")
        try:
            if self.reader == "ui_control":
                return UIControlOutput.model_validate(reply).build(agent_id, agent_name)
            if self.reader == "widget_control":
                return WidgetControlOutput.model_validate(reply).build(agent_id, agent_name)
            if self.mapping is None or self.reader == "v2_raw":
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


SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "default": DefaultOutput,
    "default_v2": DefaultOutput,
    "v2_raw": RawOutput,
    "ui_control": UIControlOutput,
    "widget_control": WidgetControlOutput,
}
"""The reply model behind each built-in format (its JSON schema is the shipped file)."""

_INSTRUCTIONS = {
    "default": (
        "Reply with a single JSON object and nothing else. Set has_insight to false when "
        "you have nothing useful to say; you may still emit events and updates."
    ),
    "v2_raw": "Reply with a single JSON object and nothing else (insights may be empty).",
    "ui_control": (
        "You control a user interface. Reply with a single JSON object and nothing else: an "
        "optional spoken insight, silent ui_actions for widgets, and state_snapshot for "
        "session state. Leave out insight when you have nothing to say."
    ),
    "widget_control": (
        "You are a widget controller. Reply with a single JSON object and nothing else. It "
        "must contain a ui_actions array (empty when nothing changes); insight and "
        "state_snapshot are optional."
    ),
}
_INSTRUCTIONS["default_v2"] = _INSTRUCTIONS["default"]


def schema_json(name: str) -> str:
    """The JSON schema of a built-in format as shipped (``schemas/<name>.json``)."""
    model = SCHEMA_MODELS[name]
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    schema.update(model.model_json_schema())
    schema["title"] = name
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def load_schema(name: str) -> dict[str, Any]:
    """Read the shipped JSON schema of the built-in format ``name``."""
    text = resources.files(__package__).joinpath("schemas", f"{name}.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _builtin(name: str) -> OutputFormat:
    readers: dict[str, Any] = {
        "v2_raw": "v2_raw",
        "ui_control": "ui_control",
        "widget_control": "widget_control",
    }
    return OutputFormat(
        name=name,
        json_schema=load_schema(name),
        instruction=_INSTRUCTIONS[name],
        mapping=None if name == "v2_raw" else OutputMapping(),
        reader=readers.get(name),
    )


_LOCK = threading.Lock()
_FORMATS: dict[str, OutputFormat] = {name: _builtin(name) for name in SCHEMA_MODELS}


def register_output_format(output_format: OutputFormat, *, replace: bool = False) -> None:
    """Make ``output_format`` available by name to every ``DynamicAgent``.

    Raises:
        ConfigurationError: ``output_format`` is not an ``OutputFormat``, its name is blank,
            or the name is taken and ``replace`` is false.
    """
    if not isinstance(output_format, OutputFormat):
        raise ConfigurationError(
            "register_output_format needs an OutputFormat(name=..., json_schema=...), got "
            f"{type(output_format).__name__}"
        )
    if not output_format.name.strip():
        raise ConfigurationError("an output format needs a name that is not blank")
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
        found = _FORMATS.get(name) if isinstance(name, str) else None
    if found is None:
        raise ConfigurationError(
            f"unknown output_format {name!r}; known: {', '.join(output_format_names())}"
        )
    return found


def output_format_names() -> list[str]:
    """Names of the registered formats."""
    with _LOCK:
        return sorted(_FORMATS)
