"""Swarm mode: workers hand the conversation to each other inside one run.

::

    first worker ──► pauses with a "handoff" pending action (transfer_to_agent)
         │              │
         │              ├─ target not allowed ─► the same worker gets an error tool result
         │              │                        and continues (workforce.warning)
         │              ├─ max_handoffs reached ─► failed report
         │              └─ accepted ─► workforce.handoff; the target starts with the
         │                             conversation minus system messages + the context
         └─► any other pause ─► paused report (active worker, handoff count, child state)

A target is allowed when it is a member of the workforce and, if the handoff tool that was
called has an allowlist (``tool.metadata["available_agents"]``), in that allowlist. The tool is
looked up among the tools of the run, so ``Job.tools_override`` tools are checked too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deskwork.core.event import EventType
from deskwork.core.job import Job
from deskwork.core.message import Message
from deskwork.core.pending import PendingAction
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.core.tool_call import ToolResult
from deskwork.runtime._run import WorkerRun, resolve_tools
from deskwork.runtime._tool_step import resume_pending
from deskwork.runtime.config import RunConfig
from deskwork.runtime.worker import Worker
from deskwork.tools.handoff import swarm_handoffs
from deskwork.workforce._members import (
    Resume,
    child_from_payload,
    composite_failure,
    composite_outcome,
    run_member,
    sum_metrics,
)

if TYPE_CHECKING:
    from deskwork.workforce._workforce import Workforce

__all__ = ["Accepted", "Rejected", "check_handoff", "mismatch", "resume", "start"]

Outcome = tuple[Report, RunState]


@dataclass(frozen=True, slots=True)
class Accepted:
    """A valid handoff: switch to ``target`` with ``context``."""

    target: Worker
    context: str


@dataclass(frozen=True, slots=True)
class Rejected:
    """An invalid handoff; ``reason`` becomes the handoff call's error result."""

    target: str | None
    reason: str


@dataclass(slots=True)
class _Swarm:
    """Progress of one swarm run."""

    wf: Workforce
    config: RunConfig
    job: Job
    """The root job (members resume with it: tool overrides and response schema)."""
    active: Worker
    handoffs: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    """Metrics of the workers that already handed off."""


async def start(wf: Workforce, config: RunConfig, job: Job) -> Outcome:
    """Start the first worker and follow its handoffs."""
    swarm = _Swarm(wf, config, job, wf.workers[0])
    with swarm_handoffs(config.run_id):  # its workers' transfer_to_agent calls pause for it
        return await _drive(swarm, await run_member(swarm.active, config, job))


async def resume(
    wf: Workforce, config: RunConfig, state: RunState, decision: Any, job: Job
) -> Outcome:
    """Continue the exact worker that paused, then keep following handoffs."""
    payload = state.payload
    error = mismatch(wf, payload)
    if error is not None:
        return composite_failure(wf, config, job, error)
    name = payload.get("worker")
    worker = wf.get_worker(name)
    child = child_from_payload(payload)
    if worker is None or child is None or child.runner_name != worker.name:
        return composite_failure(wf, config, job, f"no stored state for swarm worker {name!r}")
    swarm = _Swarm(
        wf,
        config,
        job,
        worker,
        handoffs=int(payload.get("handoffs") or 0),
        metrics=dict(payload.get("metrics") or {}),
    )
    with swarm_handoffs(config.run_id):
        return await _drive(swarm, await run_member(worker, config, job, Resume(child, decision)))


def mismatch(wf: Workforce, payload: Mapping[str, Any]) -> str | None:
    """Why ``wf`` cannot continue this paused state: the worker it paused in is not a member.
    ``None`` when it can, or when the state is incomplete (then :func:`resume` fails the run).
    """
    name = payload.get("worker")
    if isinstance(name, str) and wf.get_worker(name) is None:
        return f"paused swarm worker {name!r} is not a member of workforce {wf.name!r}"
    return None


async def _drive(swarm: _Swarm, step: Outcome) -> Outcome:
    wf, config = swarm.wf, swarm.config
    report, state = step
    while (action := _handoff_action(report)) is not None:
        verdict = check_handoff(wf, swarm.active, swarm.job, action)
        if isinstance(verdict, Rejected):
            wf.emit(config, EventType.WORKFORCE_WARNING, _rejection(swarm, verdict))
            resume = Resume(state, ToolResult(error=verdict.reason, exception_type="Handoff"))
            report, state = await run_member(swarm.active, config, swarm.job, resume)
            continue
        if swarm.handoffs >= wf.max_handoffs:
            error = f"max_handoffs exceeded ({wf.max_handoffs})"
            metrics = sum_metrics(swarm.metrics, report.metrics)
            return composite_failure(wf, config, swarm.job, error, metrics=metrics)
        next_job = await _handoff_job(swarm, state, verdict)
        swarm.metrics = sum_metrics(swarm.metrics, report.metrics)
        swarm.handoffs += 1
        wf.emit(
            config,
            EventType.WORKFORCE_HANDOFF,
            {
                "from": swarm.active.name,
                "to": verdict.target.name,
                "context": verdict.context,
                "handoffs": swarm.handoffs,
            },
        )
        swarm.active = verdict.target
        report, state = await run_member(swarm.active, config, next_job)
    return _settle(swarm, report, state)


def _handoff_action(report: Report) -> PendingAction | None:
    action = report.pending_action
    if report.status == "paused" and action is not None and action.type == "handoff":
        return action
    return None


def _rejection(swarm: _Swarm, verdict: Rejected) -> dict[str, Any]:
    return {
        "reason": "handoff_rejected",
        "worker": swarm.active.name,
        "target": verdict.target,
        "detail": verdict.reason,
    }


def check_handoff(
    wf: Workforce, worker: Worker, job: Job, action: PendingAction
) -> Accepted | Rejected:
    """Decide whether ``worker``'s handoff request may switch the active worker.

    Args:
        wf: The workforce (membership).
        worker: The worker that called the handoff tool.
        job: The run's job (its ``tools_override`` decides which tool was called).
        action: The worker's ``handoff`` pending action.
    """
    call = action.tool_call
    target = call.arguments.get("agent_name")
    if call.error or not isinstance(target, str) or not target:
        return Rejected(None, f"{call.name} needs an agent_name (a member of the workforce)")
    tool = resolve_tools(worker, job).get(call.name)
    allowlist = tool.metadata.get("available_agents") if tool is not None else None
    if allowlist is not None and target not in allowlist:  # [] allows no target
        return Rejected(target, f"agent {target!r} is not allowed; choose one of {allowlist}")
    member = wf.get_worker(target)
    if member is None:
        names = [w.name for w in wf.workers]
        return Rejected(target, f"agent {target!r} is not in this workforce; members: {names}")
    context = call.arguments.get("context")
    return Accepted(member, context if isinstance(context, str) else "")


async def _handoff_job(swarm: _Swarm, state: RunState, verdict: Accepted) -> Job:
    """The target's job: the prior conversation without system messages, plus the context.

    The handoff call is answered in the prior worker's history first (``Transferred to ...``),
    so every tool call in the passed conversation has its result.
    """
    run = WorkerRun.restore(swarm.active, swarm.config, state, swarm.job)
    answer = ToolResult(content=f"Transferred to {verdict.target.name}")
    if state.pending_action is not None:
        await resume_pending(run, state.pending_action, answer)
    history = [m for m in run.messages if m.role != "system"]
    note = f"Handoff from {swarm.active.name} to {verdict.target.name}."
    if verdict.context:
        note += f"\nContext: {verdict.context}"
    history.append(Message(role="user", content=note))
    return swarm.job.model_copy(update={"input": None, "initial_messages": history})


def _settle(swarm: _Swarm, report: Report, state: RunState) -> Outcome:
    wf, config, job = swarm.wf, swarm.config, swarm.job
    total = sum_metrics(swarm.metrics, report.metrics)
    if report.status != "paused":
        return composite_outcome(wf, config, job, report, metrics=total)
    payload = {
        "mode": "swarm",
        "stage": "swarm",
        "worker": swarm.active.name,
        "handoffs": swarm.handoffs,
        "metrics": swarm.metrics,
    }
    return composite_outcome(wf, config, job, report, metrics=total, payload=payload, child=state)
