"""Managed mode: a manager picks one worker, and that worker runs the job.

::

    manager (tools disabled, response schema {"worker": <name>})
        │  selection: structured ``worker`` field → worker name found in the output → first worker
        ▼
    selected worker runs the root job ──► its report (metrics: manager + worker)

A pause of the manager or of the selected worker stores the stage (``"manager"`` or
``"worker"``), the paused member's name and its state; resume continues that member.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model

from deskwork.adapters.base import structured_reply
from deskwork.core.event import EventType
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig
from deskwork.runtime.worker import Worker
from deskwork.workforce._members import (
    Resume,
    child_from_payload,
    composite_failure,
    composite_outcome,
    run_member,
    sum_metrics,
    task_text,
)

if TYPE_CHECKING:
    from deskwork.workforce._workforce import Workforce

__all__ = [
    "Selection",
    "WorkerSelection",
    "mismatch",
    "resume",
    "select_worker",
    "selection_job",
    "selection_schema",
    "start",
]

STAGE_MANAGER = "manager"
STAGE_WORKER = "worker"
_ROSTER_CHARS = 300
_WORKER_FIELD = "Name of the worker that should handle the task"

Outcome = tuple[Report, RunState]


@dataclass(frozen=True, slots=True)
class Selection:
    """The worker a manager picked, and which rule picked it."""

    worker: Worker
    rule: Literal["structured", "name_scan", "first_worker"]
    """``structured``: the ``worker`` field; ``name_scan``: a name found in the output;
    ``first_worker``: nothing matched."""


async def start(wf: Workforce, config: RunConfig, job: Job) -> Outcome:
    """Ask the manager, then run the selected worker."""
    step = await run_member(wf.manager, config, selection_job(wf.workers, job))
    return await _after_manager(wf, config, job, step)


async def resume(
    wf: Workforce, config: RunConfig, state: RunState, decision: Any, job: Job
) -> Outcome:
    """Continue the paused manager or selected worker (the stored stage says which)."""
    payload = state.payload
    child = child_from_payload(payload)
    stage, name = payload.get("stage"), payload.get("worker")
    error = mismatch(wf, payload)
    if error is not None:
        return composite_failure(wf, config, job, error)
    if child is None:
        return composite_failure(wf, config, job, "stored workforce state has no paused member")
    if stage == STAGE_MANAGER and name == wf.manager.name:
        manager_job = selection_job(wf.workers, job)
        step = await run_member(wf.manager, config, manager_job, Resume(child, decision))
        return await _after_manager(wf, config, job, step)
    worker = wf.get_worker(name)
    if stage != STAGE_WORKER or worker is None:
        error = f"stored workforce state is incomplete: stage {stage!r}, worker {name!r}"
        return composite_failure(wf, config, job, error)
    step = await run_member(worker, config, job, Resume(child, decision))
    return _after_worker(wf, config, job, worker, step, dict(payload.get("metrics") or {}))


def mismatch(wf: Workforce, payload: Mapping[str, Any]) -> str | None:
    """Why ``wf`` cannot continue this paused state: the manager or the selected worker it
    paused in is not ``wf``'s. ``None`` when it can, or when the state is incomplete (then
    :func:`resume` fails the run: no workforce could continue it).
    """
    stage, name = payload.get("stage"), payload.get("worker")
    if not isinstance(name, str):
        return None
    if stage == STAGE_MANAGER and name != wf.manager.name:
        return f"paused manager {name!r} is not this workforce's manager {wf.manager.name!r}"
    if stage == STAGE_WORKER and wf.get_worker(name) is None:
        return f"paused worker {name!r} is not in workforce {wf.name!r}"
    return None


async def _after_manager(wf: Workforce, config: RunConfig, job: Job, step: Outcome) -> Outcome:
    report, state = step
    if report.status == "paused":
        payload = {"mode": "managed", "stage": STAGE_MANAGER, "worker": wf.manager.name}
        return composite_outcome(
            wf, config, job, report, metrics=report.metrics, payload=payload, child=state
        )
    selection = select_worker(wf.workers, report)
    if selection.rule != "structured":
        wf.emit(
            config,
            EventType.WORKFORCE_WARNING,
            {
                "reason": f"manager_selection_{selection.rule}",
                "selected": selection.worker.name,
                "manager_status": report.status,
                "manager_errors": report.errors,
            },
        )
    worker_step = await run_member(selection.worker, config, job)
    return _after_worker(wf, config, job, selection.worker, worker_step, report.metrics)


def _after_worker(
    wf: Workforce,
    config: RunConfig,
    job: Job,
    worker: Worker,
    step: Outcome,
    manager_metrics: dict[str, Any],
) -> Outcome:
    report, state = step
    total = sum_metrics(manager_metrics, report.metrics)
    if report.status != "paused":
        return composite_outcome(wf, config, job, report, metrics=total)
    payload = {
        "mode": "managed",
        "stage": STAGE_WORKER,
        "worker": worker.name,
        "metrics": manager_metrics,
    }
    return composite_outcome(wf, config, job, report, metrics=total, payload=payload, child=state)


class WorkerSelection(BaseModel):
    """The manager's answer: the name of the worker that should run the job.

    The manager's response schema is a subclass made for its roster
    (:func:`selection_schema`), which Python cannot import by name; its answers pickle as
    this class, so a durable desk, which records each model call's result pickled, can
    record the manager's.
    """

    model_config = ConfigDict(defer_build=True)  # built at first use, not at import

    worker: str = Field(description=_WORKER_FIELD)

    def __reduce__(self) -> tuple[Any, ...]:
        return (WorkerSelection.model_validate, ({"worker": self.worker},))


def selection_schema(names: list[str]) -> type[WorkerSelection]:
    """The manager's response schema: a :class:`WorkerSelection` for this roster.

    The JSON schema lists the names as an ``enum`` (so providers constrain the reply), while
    validation accepts any string so a near miss still reaches the name-scan fallback.
    """
    choices: list[JsonValue] = [*names]
    field: Any = (
        str,
        Field(description=_WORKER_FIELD, json_schema_extra={"enum": choices}),
    )
    return create_model("WorkerSelection", __base__=WorkerSelection, worker=field)


def selection_job(workers: list[Worker], job: Job) -> Job:
    """The manager's job: the roster and the task, tools disabled, a ``worker`` schema."""
    roster = "\n".join(_roster_line(worker) for worker in workers)
    prompt = (
        "Choose the worker best suited to handle the task below.\n\n"
        f"Workers:\n{roster}\n\nTask:\n{task_text(job.input)}\n\n"
        "Reply with the chosen worker's exact name in the `worker` field."
    )
    return Job(
        input=prompt,
        response_schema=selection_schema([worker.name for worker in workers]),
        tools_override=[],
        thinking=job.thinking,
        drop_params=job.drop_params,
        extra_body=job.extra_body,
        metadata=job.metadata,
    )


def _roster_line(worker: Worker) -> str:
    about = " ".join((worker.instructions or "").split())[:_ROSTER_CHARS]
    return f"- {worker.name}: {about}" if about else f"- {worker.name}"


def select_worker(workers: list[Worker], report: Report) -> Selection:
    """Apply the selection rules to the manager's report.

    1. A completed report whose ``worker`` field is exactly a worker's name.
    2. Otherwise the worker whose name appears first in the manager's output (whole words,
       case-insensitive; the longer name wins a tie): its ``worker`` field or its content,
       or, when its structured output failed, the reply it gave instead (prose, say).
    3. Otherwise the first worker.
    """
    by_name = {worker.name: worker for worker in workers}
    field = _worker_field(report.data) if report.status == "completed" else None
    if field in by_name:
        return Selection(by_name[field], "structured")
    replies = [structured_reply(error) for error in report.errors]
    found = _scan(" ".join(t for t in (field, report.content, *replies) if t), workers)
    if found is not None:
        return Selection(found, "name_scan")
    return Selection(workers[0], "first_worker")


def _worker_field(data: Any) -> str | None:
    value = data.get("worker") if isinstance(data, dict) else getattr(data, "worker", None)
    return value if isinstance(value, str) else None


def _scan(text: str, workers: list[Worker]) -> Worker | None:
    best: tuple[int, int, Worker] | None = None
    for worker in workers:
        pattern = rf"(?<!\w){re.escape(worker.name)}(?!\w)"
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match is None:
            continue
        rank = (match.start(), -len(worker.name), worker)
        if best is None or rank[:2] < best[:2]:
            best = rank
    return None if best is None else best[2]
