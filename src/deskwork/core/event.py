"""Runtime events: one model for everything that happens in a run."""

from __future__ import annotations

import itertools
import os
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from deskwork.core._model import DeskworkModel, as_stored_dict, trusted
from deskwork.core.redact import redact, redact_str_keyed

__all__ = ["Event", "EventType"]


class EventType(StrEnum):
    """Built-in event types. Members compare equal to their string values."""

    RUN_STARTED = "run.started"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_PAUSED = "run.paused"
    RUN_RESUMED = "run.resumed"
    RUN_RECOVERED = "run.recovered"
    """A durable run picked up after a crash (``desk.recover()``, a worker)."""
    RUN_UNRECOVERABLE = "run.unrecoverable"
    """A durable run ``recover()`` could not continue; ``payload["reason"]`` says why."""
    STEP_STARTED = "step.started"
    STEP_COMPLETED = "step.completed"
    STEP_PAUSED = "step.paused"
    WORKER_STARTED = "worker.started"
    WORKER_COMPLETED = "worker.completed"
    WORKER_FAILED = "worker.failed"
    WORKER_PAUSED = "worker.paused"
    WORKER_CONTEXT_SUMMARIZED = "worker.context_summarized"
    WORKFORCE_STARTED = "workforce.started"
    WORKFORCE_COMPLETED = "workforce.completed"
    WORKFORCE_HANDOFF = "workforce.handoff"
    WORKFORCE_WARNING = "workforce.warning"
    TOOL_STARTED = "tool.started"
    TOOL_COMPLETED = "tool.completed"
    TOOL_FAILED = "tool.failed"
    TOOL_RETRY = "tool.retry"
    """A failed attempt of a tool with ``retries`` that is tried again: ``tool_call_id``,
    ``attempt`` (1 for the first), ``retries``, ``wait_seconds``, ``error_type``,
    ``error_message`` (redacted), ``timed_out``. The call's end is ``tool.completed`` or
    ``tool.failed`` as ever."""
    TOOL_CONFIRMATION_REQUESTED = "tool.confirmation_requested"
    TOOL_USER_INPUT_REQUESTED = "tool.user_input_requested"
    STREAM_TOKEN = "stream.token"
    ASSISTANT_MESSAGE = "assistant.message"
    LLM_STARTED = "llm.started"
    LLM_COMPLETED = "llm.completed"
    LLM_FAILED = "llm.failed"
    LLM_RETRY = "llm.retry"
    LLM_STREAM_FALLBACK = "llm.stream_fallback"
    LLM_STREAM_RESTARTED = "llm.stream_restarted"
    """A stream cut midway was asked for again after some of its tokens went out: the
    ``stream.token`` events of the model call before it are not part of the reply."""


END_EVENT_BY_STATUS: dict[str, EventType] = {
    "completed": EventType.RUN_COMPLETED,
    "paused": EventType.RUN_PAUSED,
    "failed": EventType.RUN_FAILED,
}
"""A run's end event by the status it ends with: every run has exactly one of them."""
RUN_END_EVENTS = frozenset(END_EVENT_BY_STATUS.values())
"""``run.completed``, ``run.paused`` and ``run.failed``."""


class Event(DeskworkModel):
    """A runtime signal. ``source`` names the emitter (worker, tool, workforce, ...)."""

    event_id: str
    type: str
    timestamp: datetime
    run_id: str
    source: str
    payload: dict[str, Any] = Field(default_factory=dict)

    _stored_dicts = field_validator("payload", mode="before")(as_stored_dict)


_FIELDS = frozenset(Event.model_fields)


_COUNTER_BASE = 1 << 48
"""The ids' counter starts here: ``hex(n)`` is then ``"0x1"`` and the counter's 12 hex digits."""


def _event_ids() -> tuple[str, itertools.count[int]]:
    return os.urandom(10).hex(), itertools.count(_COUNTER_BASE)


_ids = _event_ids()
os.register_at_fork(after_in_child=lambda: globals().update(_ids=_event_ids()))


def new_event_id() -> str:
    """A fresh event id: 32 hex characters, like :func:`deskwork.utils.new_id`.

    80 random bits drawn once per process (again in a forked child) and a 48-bit counter:
    unique within the process by the counter and across processes (a durable run's workers
    share one event log) by the random part, at half the cost of a system call per event.
    """
    prefix, counter = _ids
    return prefix + hex(next(counter))[3:]  # a third cheaper than formatting "012x"


_now = datetime.now


def new_event(run_id: str, event_type: str, source: str, payload: Any) -> Event:
    """A new event of the run (fresh id, the current time) with a redacted copy of ``payload``.

    The common case (a plain dict with text keys, a text source) skips Pydantic's validation,
    which would only copy the fresh redacted dict again: the event equals a validated one, at
    about a third of the cost (the desk's hot path: 12 events a run).
    """
    if type(payload) is dict and type(source) is str:
        redacted = redact_str_keyed(payload) if payload else {}
        if redacted is not None:
            fields = {"event_id": new_event_id(), "type": event_type,
                      "timestamp": _now(UTC), "run_id": run_id, "source": source,
                      "payload": redacted}  # fmt: skip
            return trusted(Event, fields, set(_FIELDS))
    return Event(
        event_id=new_event_id(),
        type=event_type,
        timestamp=_now(UTC),
        run_id=run_id,
        source=source,
        payload=redact(payload) if payload else {},
    )
