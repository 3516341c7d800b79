"""Job: the immutable input to any runner."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from deskwork.core._model import DeskworkModel
from deskwork.core.message import Message
from deskwork.exceptions import ConfigurationError, StoreError
from deskwork.utils import JSON_ATOMS, new_id, picklable, to_jsonable

__all__ = [
    "Brief",
    "Job",
    "ResponseSchema",
    "as_job",
    "load_schema",
    "schema_path",
    "unnamed_schema_class",
]

if TYPE_CHECKING:
    from typing import TypeAlias

    from pydantic import TypeAdapter

    ResponseSchema: TypeAlias = type[BaseModel] | TypeAdapter[Any]


def __getattr__(name: str) -> Any:
    """``ResponseSchema``, made on first use: it needs pydantic's TypeAdapter, whose module
    (``pydantic.type_adapter``) loads only with structured output."""
    if name != "ResponseSchema":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pydantic import TypeAdapter

    value = type[BaseModel] | TypeAdapter[Any]
    globals()[name] = value
    return value


class Job(DeskworkModel):
    """The input to a worker, workforce, flow or architecture. Immutable."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str = Field(default_factory=new_id)
    input: Any = None
    """Payload passed as the user message; non-string values are JSON serialized."""
    expected_output: str | None = None
    """Appended to the system message."""
    tools_override: list[Any] | None = None
    """Per-run tool list: ``Tool`` instances and/or tool names resolved from the worker.
    Other entries (a name the worker has no tool of) are ignored, with a warning on the
    ``deskwork.runtime`` logger naming them when the run starts. Entries that give
    different tools of one name leave the last of them, with a warning naming that name
    (the model is offered one tool a name); the same tool or name twice is one entry."""
    response_schema: Any = None
    """A Pydantic model class or a ``TypeAdapter`` for structured output."""
    constraints: str | list[str] | None = None
    """Extra constraints appended to the system message."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    initial_messages: list[Message] | None = None
    """Conversation history to start from (used by sessions)."""
    thinking: dict[str, Any] | None = None
    structured_stream_mode: Literal["off", "preview"] | None = None
    drop_params: bool | None = None
    extra_body: dict[str, Any] | None = None
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Spending limit of this run in USD (with the desk's ``max_cost_usd``, the lower wins):
    the run fails before a model call that would exceed it."""

    @model_validator(mode="after")
    def _has_something_to_say(self) -> Job:
        """A job without input and without history would send the model an empty
        conversation (and "complete" on whatever it makes up): reject it."""
        empty = self.input is None or (isinstance(self.input, str) and not self.input.strip())
        if empty and not self.initial_messages:
            raise ValueError(
                "Job needs an input (a non-empty string or any other value), or"
                " initial_messages to continue from"
            )
        return self

    @model_validator(mode="after")
    def _fits_a_run_store(self) -> Job:
        """Refuse here, not when the run is saved (or read back), a text longer than a run
        store keeps, or data nested deeper than it keeps (``MAX_STORED_DEPTH``: 100)."""
        check_sizes = _store_checks()[0]
        try:
            check_sizes(self.input)
            if self.metadata:
                check_sizes(self.metadata)
            for message in self.initial_messages or ():
                check_sizes(message.content)
        except StoreError as exc:
            raise ValueError(f"Job does not fit a run store: {exc}") from None
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy of the job; with ``update``, its stored form is made again (not the cached
        one of this job, which the copy's ``__dict__`` would carry)."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied.__dict__.pop("_state_cache", None)
        return copied

    def to_state(self) -> dict[str, Any]:
        """A JSON-compatible form for the run store; schemas are kept as import paths.

        Computed once per job (jobs are immutable). The result is a shallow copy of the
        cached form: treat nested values as read-only.
        """
        cached: dict[str, Any] | None = self.__dict__.get("_state_cache")
        if cached is None:
            cached = self._build_state()
            self.__dict__["_state_cache"] = cached  # frozen model: bypass __setattr__
        return dict(cached)

    def _build_state(self) -> dict[str, Any]:
        values = self.__dict__
        # a field at None is stored as None: only the others (the job's own values, its id
        # and metadata) are looked at; a subclass (fields or defaults of its own) is dumped
        own = {name: values[name] for name in _MADE}
        for name in _NONE:
            if values[name] is not None:
                own[name] = values[name]
        if type(self) is Job and _store_checks()[1](own):  # plain JSON: copied as it is
            copied = {k: v if type(v) in JSON_ATOMS else _plain_copy(v) for k, v in own.items()}
            data = {**_NONE_STATE, **copied}
        else:
            data = dict(to_jsonable(self.model_dump(mode="python", exclude=set(_NOT_DUMPED))))
        data["response_schema"] = schema_path(self.response_schema)
        data["tools_override"] = (
            None
            if self.tools_override is None
            else [
                entry if isinstance(entry, str) else getattr(entry, "name", str(entry))
                for entry in self.tools_override
            ]
        )
        return data

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Job:
        """Rebuild a job stored with :meth:`to_state` (in another process, too).

        Raises:
            ConfigurationError: the job had a response schema this process cannot load (a
                class defined in a function or in another ``__main__``, or a
                ``TypeAdapter``); without it the run would go on unvalidated.
        """
        values = dict(data)
        path = values.get("response_schema")
        values["response_schema"] = schema = load_schema(path)
        if path is not None and schema is None:
            raise ConfigurationError(
                f"the job's response_schema {path} cannot be loaded in this process: a run"
                " continued elsewhere than where it started (a resume or a recovery after a"
                " restart, a queued run) needs a pydantic model class it can import by that"
                " path (defined at module level in an importable module)"
            )
        return cls.model_validate(values)


Brief = Job

_NOT_DUMPED = ("tools_override", "response_schema")
"""Fields :meth:`Job.to_state` writes in a form of its own (names, an import path), last."""
_DUMPED = tuple(name for name in Job.model_fields if name not in _NOT_DUMPED)
_NONE = frozenset(
    name
    for name in _DUMPED
    if Job.model_fields[name].default is None and Job.model_fields[name].default_factory is None
)
"""Dumped fields whose default is ``None``: a job that did not set one stores ``None``."""
_MADE = tuple(name for name in _DUMPED if name not in _NONE)
"""Dumped fields made for each job (``id``, ``metadata``): always looked at."""
_NONE_STATE = {name: None for name in _DUMPED}
"""The stored form's keys in field order, each ``None`` until the job's own value is set."""


def _plain_copy(value: Any) -> Any:
    """A copy of ``value``, plain JSON (``is_plain_json``): new containers, the same atoms."""
    if type(value) is dict:
        return {key: _plain_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_plain_copy(item) for item in value]
    return value


@cache
def _store_checks() -> tuple[Callable[[Any], None], Callable[[Any], bool]]:
    """The run stores' ``check_sizes`` and ``is_plain_json`` (imported on first use, once:
    the store package imports core)."""
    from deskwork.store._blobs import check_sizes, is_plain_json

    return check_sizes, is_plain_json


def schema_path(schema: Any) -> str | None:
    """``module:QualName`` of a model class; ``<...>`` describing any other schema (a
    ``TypeAdapter``), which :func:`load_schema` cannot load; ``None`` for no schema."""
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return f"{schema.__module__}:{schema.__qualname__}"
    return f"<{schema!r}>"


def unnamed_schema_class(schema: Any) -> type | None:
    """A class that ``schema`` is or holds (a ``TypeAdapter``'s type and its arguments:
    ``list[Answer]``) and that cannot be found by its name; ``None`` when there is none.

    The test is pickle's own (a class pickles by reference: its module and qualified name
    must lead back to it, ``NoneType`` and the like aside). It fails for a class defined
    inside a function, one made by ``pydantic.create_model`` (not bound to its name in its
    module), or one redefined or reloaded since; Python pickles the instances of none of
    them.
    """
    from pydantic import TypeAdapter  # (not loaded by importing deskwork)

    if isinstance(schema, TypeAdapter):
        schema = getattr(schema, "_type", None)  # (the type it was made for)
    if isinstance(schema, type) and not picklable(schema):
        return schema
    for arg in get_args(schema):
        found = unnamed_schema_class(arg)
        if found is not None:
            return found
    return None


def _attribute_path(obj: Any, qualname: str) -> Any:
    """The attribute of ``obj`` at the dotted ``qualname``; ``None`` when one is missing."""
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def load_schema(path: str | None) -> type[BaseModel] | None:
    """Import a model class stored by :func:`schema_path`; ``None`` when it cannot be found."""
    if not path or ":" not in path:
        return None
    module_name, qualname = path.split(":", 1)
    try:
        obj = _attribute_path(importlib.import_module(module_name), qualname)
    except ImportError:
        return None
    if isinstance(obj, type) and issubclass(obj, BaseModel):
        return obj
    return None


def as_job(value: Any, what: str = "job") -> Job:
    """``value`` as a job: a :class:`Job` itself, any other value as its input.

    Raises:
        ConfigurationError: ``value`` is ``None`` or a blank string (no job to do); the
            message names it as ``what``.
    """
    if isinstance(value, Job):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        given = "None" if value is None else "a blank string"
        raise ConfigurationError(
            f"{what} must be a Job or its input (a non-empty string or any other value),"
            f" not {given}"
        )
    return Job(input=value)
