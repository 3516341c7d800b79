"""Pydantic models of every request and response body of the HTTP API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deskwork.core.pending import PendingAction
from deskwork.core.types import RunStatus

__all__ = [
    "EventOut",
    "HistoryOut",
    "JobIn",
    "MessageIn",
    "ResumeIn",
    "RunAccepted",
    "RunIn",
    "RunList",
    "RunOut",
    "RunReport",
    "RunSummary",
    "RunnerOut",
    "SessionIn",
    "SessionOut",
]


class JobIn(BaseModel):
    """The job of a new run: the fields of :class:`deskwork.Job` a client may set."""

    model_config = ConfigDict(extra="forbid")

    input: Any = Field(description="The job's input (text or JSON).")
    expected_output: str | None = None
    constraints: str | list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    max_cost_usd: float | None = Field(default=None, gt=0)

    @field_validator("metadata")
    @classmethod
    def _no_session_key(cls, metadata: dict[str, Any]) -> dict[str, Any]:
        """A run a client starts is no session's turn (its resume would be saved to that
        session): the key that names one is the server's to set."""
        from deskwork.runtime.session import SESSION_KEY

        if SESSION_KEY in metadata:
            raise ValueError(f"metadata key {SESSION_KEY!r} is reserved for session turns")
        return metadata


class RunIn(BaseModel):
    """``POST /runs``."""

    model_config = ConfigDict(extra="forbid")

    runner: str = Field(min_length=1, description="The name of a runner registered on the desk.")
    job: JobIn


class ResumeIn(BaseModel):
    """``POST /runs/{id}/resume``: the approval (true/false) or the user's input."""

    model_config = ConfigDict(extra="forbid")

    decision: Any = None
    action_id: str | None = Field(
        default=None,
        description="The pending action answered (pending_action.action_id): when the run"
        " waits for another one (an answer sent again after the run paused anew), 409.",
    )


class RunAccepted(BaseModel):
    """The answer of ``POST /runs`` and ``POST /runs/{id}/resume`` without ``wait``."""

    run_id: str
    status: RunStatus


class RunReport(BaseModel):
    """A run's report as JSON."""

    run_id: str
    status: RunStatus
    content: str | None = None
    data: Any = None
    errors: list[str] = Field(default_factory=list)
    pending_action: PendingAction | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)


class RunOut(RunReport):
    """``GET /runs/{id}``: the report plus the runner, the input and timestamps."""

    runner: str | None = None
    input: Any = None
    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="The conversation (system messages left out)."
    )
    parent_run_id: str | None = Field(
        default=None, description="The run this one was started in (from the run store)."
    )
    child_run_ids: list[str] = Field(
        default_factory=list, description="Runs started inside this one (from the run store)."
    )
    created_at: datetime
    updated_at: datetime


class RunSummary(BaseModel):
    """One row of ``GET /runs``."""

    run_id: str
    status: RunStatus
    runner: str | None = None
    created_at: datetime
    updated_at: datetime


class RunList(BaseModel):
    """``GET /runs``: newest first; pass ``offset=next_offset`` for the next page."""

    runs: list[RunSummary]
    next_offset: int | None = None


class RunnerOut(BaseModel):
    """A runner the API can start."""

    name: str
    runner_type: str


class EventOut(BaseModel):
    """One event of a run, as sent in the ``data:`` line of the event stream."""

    position: int
    event_id: str
    type: str
    timestamp: datetime
    run_id: str
    source: str
    payload: dict[str, Any]


class SessionIn(BaseModel):
    """``POST /sessions``: a conversation with a worker runner."""

    model_config = ConfigDict(extra="forbid")

    runner: str = Field(min_length=1)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None


class SessionOut(BaseModel):
    """A session."""

    session_id: str
    runner: str


class MessageIn(BaseModel):
    """``POST /sessions/{id}/messages``."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(
        min_length=1,  # (a constrained str also refuses a lone surrogate: a 422)
        description="The user's message (not empty, not only whitespace).",
    )
    stream: Literal["sse", "none"] = Field(
        default="sse", description="'sse' streams the turn's events; 'none' returns the report."
    )

    @field_validator("message")
    @classmethod
    def _not_blank(cls, message: str) -> str:
        if not message.strip():  # as a Job's input: the turn failed to start (a 500)
            raise ValueError("the message is empty or only whitespace")
        return message


class HistoryOut(BaseModel):
    """``GET /sessions/{id}/messages``."""

    session_id: str
    messages: list[dict[str, Any]]
