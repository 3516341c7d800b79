"""The worker loop: a run's turns (model step, tool step) until it completes, pauses or fails.

:class:`~deskwork.runtime.worker.Worker` keeps the configuration; this module, and the run
machinery it imports, load with the first run (``from deskwork import Worker`` stays light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.core._model import trusted
from deskwork.core.event import EventType
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.runtime._model_step import append_assistant, request_reply, structured_turn
from deskwork.runtime._run import WorkerRun, build_messages, resolve_tools
from deskwork.runtime._tool_step import handle_tool_calls, resume_pending
from deskwork.runtime.steps import Failure, FinalOutput, Interruption, NextStep, RunAgain
from deskwork.utils import to_jsonable

if TYPE_CHECKING:
    from deskwork.core.state import RunState
    from deskwork.core.types import RunStatus
    from deskwork.memory.base import MemoryStore
    from deskwork.runtime.config import RunConfig
    from deskwork.runtime.worker import Worker

__all__ = ["resume", "start"]

CONTEXT_KEY = "context"
LAST_OUTPUT_KEY = "last_output"


async def start(worker: Worker, config: RunConfig, job: Job) -> tuple[Report, RunState]:
    """Run ``job`` on ``worker`` to completion, pause or failure (``Worker.arun``)."""
    memory = config.desk.memory_store if config.desk is not None else None
    context = memory.read(CONTEXT_KEY, worker.scope) if memory is not None else None
    run = WorkerRun(
        worker=worker,
        config=config,
        job=job,
        model=config.model_name(worker.model),
        tools=resolve_tools(worker, job, warn=True),
        messages=build_messages(worker, job, context),
    )
    run.emit(EventType.WORKER_STARTED)
    return await _drive(run, None)


async def resume(
    worker: Worker, config: RunConfig, state: RunState, decision: Any, job: Job | None
) -> tuple[Report, RunState]:
    """Continue ``worker``'s paused run from ``state`` with ``decision`` (``Worker.aresume``)."""
    job = job or Job.from_state(state.job)
    run = WorkerRun.restore(worker, config, state, job)
    if state.pending_action is None:
        return _finish(run, Failure("run has no pending action to resume"))
    run.emit(EventType.WORKER_STARTED)
    return await _drive(run, await resume_pending(run, state.pending_action, decision))


async def _drive(run: WorkerRun, step: NextStep | None) -> tuple[Report, RunState]:
    while step is None or isinstance(step, RunAgain):
        if run.iteration >= run.config.max_iterations:
            step = Failure(f"max_iterations exceeded ({run.config.max_iterations})")
            break
        run.iteration += 1
        step = await _take_turn(run)
    desk = run.config.desk
    if isinstance(step, FinalOutput) and desk is not None:
        await _remember(desk.memory_store, run, step)
    return _finish(run, step)


def _stream_eligible(run: WorkerRun) -> bool:
    return run.config.stream and run.job.response_schema is None


async def _take_turn(run: WorkerRun) -> NextStep:
    if run.job.response_schema is not None and not run.tools:
        return await structured_turn(run)
    reply = await request_reply(run, stream=_stream_eligible(run))
    if isinstance(reply, Failure):
        return reply
    append_assistant(run, reply)
    if reply.tool_calls:
        return await handle_tool_calls(run, reply.tool_calls)
    if run.job.response_schema is not None:
        return await structured_turn(run)
    return FinalOutput(content=reply.content, reasoning=reply.reasoning_content)


def _finish(run: WorkerRun, step: NextStep) -> tuple[Report, RunState]:
    run.metrics = {
        **run.metrics,
        "iterations": run.iteration,
        "tool_calls": run.tool_call_count,
        "tool_errors": run.metrics.get("tool_errors", 0),  # 0: a clean run
    }
    if isinstance(step, FinalOutput):
        report = _report(run, "completed", content=step.content, data=step.data)
        run.emit(EventType.WORKER_COMPLETED, {})
        return report, run.to_state("completed")
    if isinstance(step, Interruption):
        report = _report(run, "paused", pending_action=step.action)
        run.emit(EventType.WORKER_PAUSED, {"pending_action_type": step.action.type})
        return report, run.to_state("paused", step.action)
    error = step.error if isinstance(step, Failure) else f"unexpected step {step!r}"
    report = _report(run, "failed", errors=[error])
    run.emit(EventType.WORKER_FAILED, {"error": error})
    return report, run.to_state("failed")


_REPORT_NAMED = ("run_id", "status", "messages", "tool_calls", "metrics", "reasoning_content")


def _report(run: WorkerRun, status: RunStatus, **named: Any) -> Report:
    """``Report(run_id=..., status=status, messages=..., tool_calls=..., metrics=...,
    reasoning_content=..., **named)`` of the run as it is, built without validation (its
    parts are the run's validated ones, in fresh containers)."""
    values = {
        "run_id": run.config.run_id,
        "status": status,
        "pending_action": None,
        "content": None,
        "reasoning_content": _last_reasoning(run),
        "data": None,
        "messages": list(run.messages),
        "tool_calls": list(run.tool_calls),
        "metrics": dict(run.metrics),
        "events": [],
        "errors": [],
    }
    values.update(named)
    return trusted(Report, values, {*_REPORT_NAMED, *named})


def _last_reasoning(run: WorkerRun) -> str | None:
    for message in reversed(run.messages):
        if message.role == "assistant":
            return message.reasoning_content
    return None


async def _remember(store: MemoryStore, run: WorkerRun, step: FinalOutput) -> None:
    """Keep the run's output as the worker's last output in the desk's memory ``store``; off
    the event loop for a store whose writes block (``MemoryStore.blocking``: an embedding
    model's, which took seconds for a long reply and stopped every other run meanwhile)."""
    try:
        value = to_jsonable(step.data if step.data is not None else step.content)
    except (ValueError, RecursionError) as exc:  # keys 1 and "1"; data that contains itself
        return _not_remembered(run, exc)
    if store.blocking:
        import asyncio  # loaded with the run's loop already

        await asyncio.to_thread(store.write, LAST_OUTPUT_KEY, value, run.worker.scope)
    else:
        store.write(LAST_OUTPUT_KEY, value, run.worker.scope)


def _not_remembered(run: WorkerRun, exc: Exception) -> None:
    """Log that the run's final data has no JSON form, so the memory store keeps nothing of
    it: the run, whose work is done, does not fail for it."""
    from deskwork._logs import get_stdlib_logger  # only for such a run

    reason = "it contains itself" if isinstance(exc, RecursionError) else str(exc)
    get_stdlib_logger("deskwork.runtime").warning(
        "worker %r: its final data was not written to the memory store: %s",
        run.worker.name,
        reason,
    )
