"""Persisted run state: enough to resume a paused run in any process."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from deskwork.core._model import DeskworkModel, as_stored_dict
from deskwork.core.message import Message
from deskwork.core.pending import PendingAction
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import RunStatus

__all__ = ["RunOwner", "RunRecord", "RunState"]


class _TakesModels:
    """A dict field that also takes a model or a typed payload from Python, as its stored
    form (:func:`as_stored_dict`). JSON (a store's read) holds neither: it is validated as
    the plain dict it is, without a call into Python per value."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema = handler(source)
        return core_schema.json_or_python_schema(
            json_schema=schema,
            python_schema=core_schema.no_info_before_validator_function(as_stored_dict, schema),
        )


StoredDict = Annotated[dict[str, Any], _TakesModels()]


class RunState(DeskworkModel):
    """The full resume state of a run. ``payload`` holds runner-specific data."""

    run_id: str
    status: RunStatus
    runner_type: str
    runner_name: str
    job: StoredDict
    messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    pending_action: PendingAction | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    iteration: int = 0
    payload: StoredDict = Field(default_factory=dict)


class RunOwner(DeskworkModel):
    """The process that started (or last resumed) a run: tells live runs from interrupted ones."""

    host: str
    pid: int
    start_token: str = ""
    """The process's start time as the OS reports it (tells a reused pid from the owner)."""


class RunRecord(DeskworkModel):
    """A run as the run store keeps it."""

    run_id: str
    status: RunStatus
    input: Any = None
    output: str | None = None
    output_json: Any = None
    created_at: datetime
    updated_at: datetime
    state: RunState | None = None
    runner: str | None = None
    """The name of the runner that started the run (when the store was told)."""
    owner: RunOwner | None = None
    """The process running it, recorded when the run starts or is resumed."""
