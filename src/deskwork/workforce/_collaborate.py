"""Collaborate mode: every worker runs the job and a reducer combines the reports.

::

    distribute=... on a durable run  ─► all workers at once, each a child run on a queue
    no worker has tools for this job ─► all workers at once (gather_or_cancel)
    otherwise                         ─► one after another (pauses stay deterministic)
                                            │ a worker pauses
                                            ▼
        payload: completed_reports (JSON) · pending_worker_index · worker · child state

On resume the paused worker continues, then the remaining workers run; the stored index must
still name the same worker, otherwise the desk refuses the resume before claiming the run
(:func:`mismatch`, through ``Workforce.check_resume``) and the run stays paused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from pydantic import ValidationError

from deskwork._aio import gather_or_cancel
from deskwork.core.job import Job
from deskwork.core.redact import describe_exception
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime._durable_fanout import can_fan_out, fan_out
from deskwork.runtime._run import resolve_tools
from deskwork.runtime.config import RunConfig
from deskwork.runtime.worker import Worker
from deskwork.utils import is_integer
from deskwork.workforce._members import (
    Resume,
    child_from_payload,
    composite_failure,
    composite_outcome,
    member_job,
    run_member,
    sum_metrics,
)

if TYPE_CHECKING:
    from deskwork.workforce._workforce import Workforce

__all__ = ["MemberReport", "default_reducer", "mismatch", "resume", "start"]

Outcome = tuple[Report, RunState]


class MemberReport(Report):
    """A member's report inside a collaborate run: a :class:`Report` plus the worker's name.

    Reducers receive these, so a custom reducer can read ``report.worker``.
    """

    worker: str
    """Name of the worker that produced the report."""


def default_reducer(reports: list[Report]) -> Report:
    """Combine member reports: content under a header per worker, data per worker name.

    Args:
        reports: The member reports, in worker order (``MemberReport`` names each worker;
            plain reports are called ``worker_1``, ``worker_2``, ...).

    Returns:
        A report whose ``content`` joins every member's content under ``## <worker>``, whose
        ``data`` maps worker names to their data (``None`` when no member returned data),
        whose errors are prefixed with the worker's name, and whose status is ``failed`` when a
        member failed, else ``completed``. Metrics are summed and tool calls concatenated.
    """
    names = [getattr(r, "worker", None) or f"worker_{i + 1}" for i, r in enumerate(reports)]
    sections = [
        f"## {name}\n{r.content or ''}".rstrip() for name, r in zip(names, reports, strict=True)
    ]
    data = {name: r.data for name, r in zip(names, reports, strict=True) if r.data is not None}
    errors = [
        f"{name}: {error}" for name, r in zip(names, reports, strict=True) for error in r.errors
    ]
    failed = any(r.status == "failed" for r in reports)
    return Report(
        run_id=reports[0].run_id if reports else "",
        status="failed" if failed else "completed",
        content="\n\n".join(sections),
        data=data or None,
        tool_calls=[call for r in reports for call in r.tool_calls],
        metrics=sum_metrics(*(r.metrics for r in reports)),
        errors=errors,
    )


def runs_concurrently(workers: list[Worker], job: Job) -> bool:
    """Whether no worker has tools for ``job`` (so none can pause and all may run at once)."""
    return not any(resolve_tools(worker, job) for worker in workers)


async def start(wf: Workforce, config: RunConfig, job: Job) -> Outcome:
    """Run every worker (concurrently when none has tools) and reduce their reports.

    With ``distribute`` on a durable run, every worker runs at once as a child run of its
    own, on whichever worker process serves the queue (``runtime._durable_fanout``).
    """
    if wf.distribute and can_fan_out(config):
        return await _distributed(wf, config, job)
    if not runs_concurrently(wf.workers, job):
        return await _sequential(wf, config, job, [], None)
    steps = await gather_or_cancel(*(run_member(w, config, job) for w in wf.workers))
    done: list[MemberReport] = []
    for worker, (report, state) in zip(wf.workers, steps, strict=True):
        if report.status == "paused":  # only a custom member can pause without tools
            return _pause(wf, config, job, done, report, state)
        done.append(_member_report(worker, report))
    return _reduce(wf, config, job, done)


async def _distributed(wf: Workforce, config: RunConfig, job: Job) -> Outcome:
    members = [(worker, member_job(worker, job)) for worker in wf.workers]
    reports = await fan_out(config, members, wf.distribute, wf.name)
    done = [_member_report(w, r) for w, r in zip(wf.workers, reports, strict=True)]
    return _reduce(wf, config, job, done)


async def resume(
    wf: Workforce, config: RunConfig, state: RunState, decision: Any, job: Job
) -> Outcome:
    """Continue the paused worker, then run the remaining ones and reduce."""
    payload = state.payload
    error = mismatch(wf, payload)
    if error is not None:
        return composite_failure(wf, config, job, error)
    index = _pending_index(wf, payload)
    if index is None:
        return composite_failure(wf, config, job, "stored workforce state is incomplete")
    child = child_from_payload(payload)
    try:
        done = [MemberReport.model_validate(r) for r in payload.get("completed_reports") or ()]
    except ValidationError as exc:
        return composite_failure(wf, config, job, f"invalid completed_reports: {exc}")
    if child is None or len(done) != index:
        return composite_failure(wf, config, job, "stored workforce state is incomplete")
    return await _sequential(wf, config, job, done, Resume(child, decision))


def mismatch(wf: Workforce, payload: Mapping[str, Any]) -> str | None:
    """Why ``wf`` cannot continue this paused state: the worker it paused in is not at its
    stored place among ``wf``'s workers (removed, renamed or moved). ``None`` when it can, or
    when the state is incomplete (then :func:`resume` fails the run).
    """
    index, name = payload.get("pending_worker_index"), payload.get("worker")
    if not _is_index(index) or not isinstance(name, str) or _pending_index(wf, payload) is not None:
        return None
    return (
        f"stored pending worker index {index!r} ({name!r}) no longer matches the workers"
        f" of workforce {wf.name!r}: {[w.name for w in wf.workers]}"
    )


def _pending_index(wf: Workforce, payload: Mapping[str, Any]) -> int | None:
    """The stored index of the paused worker, if it names that worker of ``wf``."""
    index = payload.get("pending_worker_index")
    if not _is_index(index) or index >= len(wf.workers):
        return None
    return index if wf.workers[index].name == payload.get("worker") else None


def _is_index(value: Any) -> TypeGuard[int]:
    return is_integer(value) and value >= 0


async def _sequential(
    wf: Workforce, config: RunConfig, job: Job, done: list[MemberReport], resume: Resume | None
) -> Outcome:
    for worker in wf.workers[len(done) :]:
        report, state = await run_member(worker, config, job, resume)
        resume = None
        if report.status == "paused":
            return _pause(wf, config, job, done, report, state)
        done.append(_member_report(worker, report))
    return _reduce(wf, config, job, done)


def _member_report(worker: Worker, report: Report) -> MemberReport:
    return MemberReport(**dict(report), worker=worker.name)


def _pause(
    wf: Workforce,
    config: RunConfig,
    job: Job,
    done: list[MemberReport],
    report: Report,
    state: RunState,
) -> Outcome:
    index = len(done)
    payload = {
        "mode": "collaborate",
        "stage": "collaborate",
        "root_job": job.to_state(),
        "completed_reports": [r.model_dump(mode="json", exclude={"events"}) for r in done],
        "pending_worker_index": index,
        "worker": wf.workers[index].name,
    }
    metrics = sum_metrics(*(r.metrics for r in done), report.metrics)
    return composite_outcome(wf, config, job, report, metrics=metrics, payload=payload, child=state)


def _reduce(wf: Workforce, config: RunConfig, job: Job, done: list[MemberReport]) -> Outcome:
    reducer = wf.reducer or default_reducer
    try:
        combined = reducer(list(done))
    except Exception as exc:
        error = f"reducer failed: {describe_exception(exc)}"
        return composite_failure(wf, config, job, error, metrics=_total(done))
    if not isinstance(combined, Report):
        error = f"reducer returned {type(combined).__name__}, not a Report"
        return composite_failure(wf, config, job, error, metrics=_total(done))
    if combined.status not in ("completed", "failed"):  # a paused one has nothing to resume
        error = f"reducer returned a {combined.status!r} report; it must be completed or failed"
        return composite_failure(wf, config, job, error, metrics=_total(done))
    return composite_outcome(wf, config, job, combined, metrics=_total(done))


def _total(done: list[MemberReport]) -> dict[str, Any]:
    return sum_metrics(*(r.metrics for r in done))
