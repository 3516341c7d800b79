"""The mutable state of one worker run, and how it is built, saved and restored."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from deskwork._logs import get_stdlib_logger
from deskwork.core._model import trusted
from deskwork.core.job import Job
from deskwork.core.message import Message
from deskwork.core.pending import PendingAction
from deskwork.core.state import RunState
from deskwork.core.tool_call import ToolCall
from deskwork.core.types import RunStatus
from deskwork.runtime.config import RunConfig
from deskwork.tools.base import Tool

if TYPE_CHECKING:
    from deskwork.runtime.worker import Worker

__all__ = [
    "INSTRUCTIONS_MARKER",
    "MEMORY_MARKER",
    "WorkerRun",
    "build_messages",
    "new_message",
    "resolve_tools",
]

_log = get_stdlib_logger("deskwork.runtime")
_STATE_FIELDS = frozenset(RunState.model_fields)
INSTRUCTIONS_MARKER = "instructions"
MEMORY_MARKER = "memory"


@dataclass(slots=True)
class WorkerRun:
    """Everything that changes while a worker runs."""

    worker: Worker
    config: RunConfig
    job: Job
    model: str
    tools: dict[str, Tool]
    messages: list[Message]
    tool_calls: list[ToolCall] = field(default_factory=list)
    iteration: int = 0
    tool_call_count: int = 0
    reactive_attempts: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)

    def emit(
        self, event_type: str, payload: dict[str, Any] | None = None, source: str = ""
    ) -> None:
        """Emit an event for this run (source defaults to the worker's name)."""
        self.config.emit(event_type, source or self.worker.name, payload or {})

    def add_usage(self, usage: dict[str, int], cost: float | None, latency_ms: float) -> None:
        """Accumulate one model call into the run's metrics, in total and under
        ``metrics["by_model"][model]``.

        Both ``by_model`` and the model's totals are new dicts: a paused run's report and
        stored state share theirs with the run that resumes it."""
        m = self.metrics
        m["latency_ms"] = round(m.get("latency_ms", 0.0) + latency_ms, 3)
        per_model = dict(m.get("by_model") or {})
        per_model[self.model] = own = dict(per_model.get(self.model) or {})
        for totals in (m, own):
            totals["llm_calls"] = totals.get("llm_calls", 0) + 1
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                if key in usage:
                    totals[key] = totals.get(key, 0) + int(usage[key] or 0)
            if cost is not None:
                totals["cost"] = totals.get("cost", 0.0) + cost
        m["by_model"] = per_model

    def to_state(self, status: RunStatus, pending: PendingAction | None = None) -> RunState:
        """Snapshot for the run store (built from the run's validated parts as they are, in
        fresh containers: validating them again would only copy them)."""
        values = {
            "run_id": self.config.run_id,
            "status": status,
            "runner_type": "worker",
            "runner_name": self.worker.name,
            "job": self.job.to_state(),
            "messages": list(self.messages),
            "tool_calls": list(self.tool_calls),
            "pending_action": pending,
            "metrics": dict(self.metrics),
            "iteration": self.iteration,
            "payload": {
                "model": self.model,
                "tool_call_count": self.tool_call_count,
                "reactive_attempts": self.reactive_attempts,
            },
        }
        return trusted(RunState, values, set(_STATE_FIELDS))

    @classmethod
    def restore(cls, worker: Worker, config: RunConfig, state: RunState, job: Job) -> WorkerRun:
        """Rebuild a run from stored state (possibly in another process)."""
        model = state.payload.get("model") or config.model_name(worker.model)
        messages, tool_calls = _unshared_open_calls(state)
        return cls(
            worker=worker,
            config=config,
            job=job,
            model=model,
            tools=resolve_tools(worker, job),
            messages=messages,
            tool_calls=tool_calls,
            iteration=state.iteration,
            tool_call_count=int(state.payload.get("tool_call_count", 0)),
            reactive_attempts=int(state.payload.get("reactive_attempts", 0)),
            metrics=dict(state.metrics),
        )


def _unshared_open_calls(state: RunState) -> tuple[list[Message], list[ToolCall]]:
    """The state's messages and tool calls for a resumed run, each call still without a
    result a copy of its own (with the messages that hold it): the resumed run sets their
    results, and the paused state may be the one a caller's report or the in-memory store
    still holds."""
    copies = {id(c): c.model_copy() for c in state.tool_calls if c.result is None}
    if not copies:
        return list(state.messages), list(state.tool_calls)
    messages = [
        m.model_copy(update={"tool_calls": [copies.get(id(c), c) for c in m.tool_calls]})
        if m.tool_calls and any(id(c) in copies for c in m.tool_calls)
        else m
        for m in state.messages
    ]
    return messages, [copies.get(id(c), c) for c in state.tool_calls]


_MESSAGE_DEFAULTS = {name: None for name in Message.model_fields if name != "metadata"}


def new_message(**named: Any) -> Message:
    """``Message(**named)`` built without validation, for the run's own messages: ``named``
    are values of the fields' types already (a validated reply's parts, texts), in
    containers the message may keep."""
    return trusted(Message, {**_MESSAGE_DEFAULTS, "metadata": {}, **named}, set(named))


def resolve_tools(worker: Worker, job: Job, *, warn: bool = False) -> dict[str, Tool]:
    """The tools for this run: the worker's, or those ``job.tools_override`` gives.

    An override entry that is neither a ``Tool`` nor the name of one of the worker's tools
    is ignored. Entries that give different tools of one name leave the last of them (the
    documented rule of ``tools_override``; the same tool or name twice is one entry). With
    ``warn`` (once per run, at its start) a warning names the ignored entries, and another
    the names given to several tools: the model is offered only one tool of a name.
    """
    if job.tools_override is None:
        return {t.name: t for t in worker.tools}
    own = {t.name: t for t in worker.tools}
    resolved: dict[str, Tool] = {}
    ignored: list[str] = []
    replaced: set[str] = set()
    for entry in job.tools_override:
        if isinstance(entry, Tool):
            tool = entry
        elif isinstance(entry, str) and entry in own:
            tool = own[entry]
        else:
            ignored.append(
                repr(entry) if isinstance(entry, str) else f"{type(entry).__name__} object"
            )
            continue
        if resolved.get(tool.name, tool) is not tool:
            replaced.add(tool.name)
        resolved[tool.name] = tool
    if warn:
        _warn_overrides(worker, own, ignored, replaced)
    return resolved


def _warn_overrides(
    worker: Worker, own: dict[str, Tool], ignored: list[str], replaced: set[str]
) -> None:
    if ignored:
        _log.warning(
            "worker %r: Job.tools_override entries ignored (not a Tool, nor the name of one of"
            " the worker's tools: %s): %s",
            worker.name,
            ", ".join(sorted(own)) or "none",
            ", ".join(ignored),
        )
    if replaced:
        _log.warning(
            "worker %r: Job.tools_override gives different tools of the same name (%s): the"
            " last entry of each name is the tool of this run, the others are not offered",
            worker.name,
            ", ".join(repr(name) for name in sorted(replaced)),
        )


def _user_content(value: Any) -> str | list[dict[str, Any]]:
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(p, dict) and "type" in p for p in value)
    ):
        return value  # multimodal content parts pass through unchanged
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str)


def _system_text(worker: Worker, job: Job) -> str | None:
    parts = [worker.instructions] if worker.instructions else []
    if job.expected_output:
        parts.append(f"Expected output: {job.expected_output}")
    if job.constraints:
        constraints = job.constraints
        if isinstance(constraints, list):
            constraints = "\n".join(f"- {c}" for c in constraints)
        parts.append(f"Constraints:\n{constraints}")
    return "\n\n".join(parts) or None


def build_messages(worker: Worker, job: Job, memory_context: Any = None) -> list[Message]:
    """System message, memory context, prior history, then the job input as a user message."""
    messages: list[Message] = []
    system = _system_text(worker, job)
    if system:
        messages.append(
            Message(role="system", content=system, metadata={"deskwork": INSTRUCTIONS_MARKER})
        )
    history = [m.model_copy() for m in job.initial_messages or ()]
    while history and history[0].role == "system":
        messages.append(history.pop(0))
    if memory_context:
        text = memory_context if isinstance(memory_context, str) else json.dumps(memory_context)
        messages.append(
            Message(
                role="system", content=f"Context:\n{text}", metadata={"deskwork": MEMORY_MARKER}
            )
        )
    messages.extend(history)
    if job.input is not None:
        content = _user_content(job.input)
        if type(content) is str:
            messages.append(new_message(role="user", content=content))
        else:  # content parts: checked (and copied) by validation
            messages.append(Message(role="user", content=content))
    return messages
