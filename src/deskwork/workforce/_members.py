"""What every composite runner needs to run members inside its own run.

A composite runner (``Workforce``, ``BlackboardArchitecture``) runs its members with
``await member.arun(config, job)`` on the *same* ``RunConfig``, so the members' events land in
the composite's run. When a member pauses, the composite stores the member's ``RunState`` as
JSON inside its own ``RunState.payload`` and returns a paused report carrying the member's
pending action; on resume it hands the stored state back to ``member.aresume``::

    composite RunState
      payload: {"child": <member RunState as JSON>, "metrics": <finished members>, ...}
      pending_action: <the member's pending action>

Metrics of a composite report are the sum of its members' metrics (:func:`sum_metrics`).

A ``Job.tools_override`` of the composite's run is the whole team's: each member gets the
``Tool`` entries and the names of its own tools (:func:`member_job`), and the entries no member
can use are logged once, when the run starts (:func:`warn_unusable_overrides`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from deskwork._logs import get_stdlib_logger
from deskwork.core.job import Job
from deskwork.core.metrics import sum_metrics
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.exceptions import ConfigurationError
from deskwork.runtime.config import RunConfig
from deskwork.runtime.runner import Runner
from deskwork.runtime.worker import Worker
from deskwork.tools.base import Tool
from deskwork.utils import is_integer, to_jsonable

__all__ = [
    "Resume",
    "check_count",
    "check_workers",
    "child_from_payload",
    "composite_failure",
    "composite_outcome",
    "member_job",
    "run_member",
    "sum_metrics",
    "task_text",
    "warn_unusable_overrides",
]

_log = get_stdlib_logger("deskwork.workforce")

CHILD_KEY = "child"
"""Payload key of the paused member's ``RunState``."""


@dataclass(frozen=True, slots=True)
class Resume:
    """How to continue a paused member: its stored state and the person's decision."""

    state: RunState
    decision: Any


async def run_member(
    member: Runner, config: RunConfig, job: Job, resume: Resume | None = None
) -> tuple[Report, RunState]:
    """Start ``member`` on ``job`` in the current run, or continue it from ``resume``.

    Args:
        member: The worker (or other runner) to run.
        config: The composite's run config (shared, so events land in the same run).
        job: The member's job (on resume it supplies tool overrides and the response schema).
        resume: The stored state and decision when continuing a paused member.

    Returns:
        The member's report and state.
    """
    job = member_job(member, job)
    if resume is None:
        return await member.arun(config, job)
    return await member.aresume(config, resume.state, resume.decision, job)


def member_job(member: Runner, job: Job) -> Job:
    """``job`` as ``member`` runs it: a worker's ``tools_override`` keeps only the ``Tool``
    entries and the names of the worker's own tools (the others are another member's, or
    nobody's: not this worker's mistake to warn of each time it runs)."""
    override = job.tools_override
    if override is None or not isinstance(member, Worker):
        return job
    own = {tool.name for tool in member.tools}
    kept = [entry for entry in override if isinstance(entry, Tool) or _named(entry, own)]
    return job if len(kept) == len(override) else job.model_copy(update={"tools_override": kept})


def warn_unusable_overrides(owner: str, members: Iterable[Worker], job: Job) -> None:
    """Log the ``job.tools_override`` entries no member can use (neither a ``Tool`` nor the
    name of one of the members' tools): once a composite run, as a worker's run does for its
    own tools."""
    names = {tool.name for member in members for tool in member.tools}
    unusable = [
        repr(entry) if isinstance(entry, str) else f"{type(entry).__name__} object"
        for entry in job.tools_override or ()
        if not isinstance(entry, Tool) and not _named(entry, names)
    ]
    if unusable:
        _log.warning(
            "%s: Job.tools_override entries ignored (not a Tool, nor the name of one of the"
            " members' tools: %s): %s",
            owner,
            ", ".join(sorted(names)) or "none",
            ", ".join(unusable),
        )


def _named(entry: Any, names: set[str]) -> bool:
    return isinstance(entry, str) and entry in names


def child_from_payload(payload: Mapping[str, Any]) -> RunState | None:
    """The paused member's state stored under ``payload["child"]``, or ``None`` if invalid."""
    raw = payload.get(CHILD_KEY)
    if not isinstance(raw, Mapping):
        return None
    try:
        return RunState.model_validate(raw)
    except ValidationError:
        return None


def composite_outcome(
    runner: Runner,
    config: RunConfig,
    job: Job,
    report: Report,
    *,
    metrics: dict[str, Any],
    payload: dict[str, Any] | None = None,
    child: RunState | None = None,
) -> tuple[Report, RunState]:
    """The composite's report and state, built from the member ``report`` that ends this step.

    The member's report is reused as is (content, data, messages, pending action, errors)
    with ``metrics`` replaced by the composite's total.

    Args:
        runner: The composite runner (its ``runner_type`` and ``name`` identify the state).
        config: The run config.
        job: The composite's root job.
        report: The member report to return.
        metrics: The total metrics of the composite run.
        payload: The composite's progress (JSON only).
        child: The paused member's state, stored under ``payload["child"]``.
    """
    report = report.model_copy(update={"run_id": config.run_id, "metrics": metrics})
    data = dict(payload or {})
    if child is not None:
        data[CHILD_KEY] = child.model_dump(mode="json")
    state = RunState(
        run_id=config.run_id,
        status=report.status,
        runner_type=runner.runner_type,
        runner_name=runner.name,
        job=job.to_state(),
        messages=report.messages,
        pending_action=report.pending_action,
        metrics=metrics,
        payload=data,
    )
    return report, state


def check_workers(owner: str, members: Iterable[tuple[str, Any]]) -> None:
    """Check that every ``(role, member)`` of a composite is a :class:`Worker` (which has a
    name: ``Worker`` refuses a blank one).

    Raises:
        ConfigurationError: naming the first role whose member is something else.
    """
    for role, member in members:
        if not isinstance(member, Worker):
            raise ConfigurationError(
                f"{owner}: {role} must be a Worker, got {type(member).__name__}"
            )


def check_count(owner: str, name: str, value: Any) -> None:
    """Check that the limit ``name`` is an integer >= 0 (not a bool or a float).

    Raises:
        ConfigurationError: naming the limit and the value given.
    """
    if not is_integer(value) or value < 0:
        raise ConfigurationError(f"{owner}: {name} must be an integer >= 0, got {value!r}")


def composite_failure(
    runner: Runner,
    config: RunConfig,
    job: Job,
    error: str,
    *,
    metrics: dict[str, Any] | None = None,
) -> tuple[Report, RunState]:
    """A failed report (and state) for the composite, with ``error`` as its only error."""
    report = Report(run_id=config.run_id, status="failed", errors=[error])
    return composite_outcome(runner, config, job, report, metrics=dict(metrics or {}))


def task_text(value: Any) -> str:
    """A job input as text: strings as is, the text parts of multimodal content, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and "type" in p for p in value):
        return "\n".join(str(p.get("text", "")) for p in value if p.get("type") == "text")
    return json.dumps(to_jsonable(value))
