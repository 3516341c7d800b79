"""Flow: a tree of steps run as one resumable run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

from pydantic import ValidationError

from deskwork._sync import run_sync
from deskwork.core.event import Event
from deskwork.core.job import Job
from deskwork.core.metrics import sum_metrics
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.exceptions import ConfigurationError
from deskwork.runtime.config import RunConfig
from deskwork.workflow._context import StepOutput, WorkflowContext
from deskwork.workflow._engine import FlowRun
from deskwork.workflow._nodes import (
    Cursor,
    Done,
    Failed,
    Node,
    Outcome,
    Paused,
    Step,
    node_list,
    paused_steps,
)

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = ["Flow"]

EventListener = Callable[[Event], None]
STATE_VERSION = 1


class Flow:
    """A sequence of workflow nodes, run through a desk as one run.

    A flow is a runner (``runner_type = "flow"``): ``flow.run(job)`` is
    ``desk.run(flow, job)``, and a flow can itself be a ``Step`` of another flow. Steps
    run inside the flow's run, so their events share its event log.

    When a step pauses, the flow stores in ``RunState.payload``::

        {"version": 1, "signature": <hash of the step tree>, "cursor": <sequence cursor>,
         "results": [<completed outputs>], "loops": {name: iteration}, "totals": <metrics>}

    The cursor (see ``deskwork.workflow._nodes``) is the path of indices down to every
    paused step, with each composite's choice (branch, route, loop iteration) and each
    paused step's own ``RunState``; resuming follows it, so finished work never runs again.
    It is plain JSON: a new process resumes by passing a re-built flow
    (``desk.resume(run_id, decision, runner=flow)`` or ``flow.resume(run_id, decision)``).

    Events (source = the step's name): ``step.started`` (also when a paused step
    resumes), ``step.completed`` with ``{"status": "completed" | "failed"}``, and
    ``step.paused`` with ``{"status": "paused"}``.

    The report: with one output, that step's content and data; with several, the contents
    under ``## <step name>`` headers and ``data`` as ``[{"step", "content", "data"}]``.
    ``metrics`` totals the steps' metrics (plus ``steps``, the number of finished steps).
    """

    runner_type = "flow"

    def __init__(self, desk: Desk, steps: Sequence[Node], *, name: str = "flow") -> None:
        self.desk = desk
        self.name = name
        self.steps = node_list(steps, "Flow")
        if not self.steps:
            raise ConfigurationError("a flow needs at least one step")
        shape = json.dumps([step.shape() for step in self.steps], sort_keys=True, default=str)
        self.signature = hashlib.sha256(shape.encode()).hexdigest()
        """Hash of the step tree's structure; a paused run resumes only on the same one."""
        self._live_jobs: dict[str, Job] = {}

    def __repr__(self) -> str:
        return f"Flow(name={self.name!r}, steps={[step.name for step in self.steps]!r})"

    # -- public API (also the Runner protocol, told apart by the first argument) ----------

    @overload
    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]: ...

    @overload
    async def arun(
        self,
        job: Job | str,
        /,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Report: ...

    async def arun(
        self,
        config: Any,
        job: Any = None,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Any:
        """Run the flow: ``await flow.arun(job)`` returns the Report (via ``desk.arun``).

        ``arun(config, job)`` is the runner protocol, called by the desk (or by a parent
        flow's ``Step``); it returns ``(report, state)``.
        """
        if isinstance(config, RunConfig):
            return await self._start(config, job)
        return await self.desk.arun(self, config, stream=stream, on_event=on_event)

    @overload
    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]: ...

    @overload
    async def aresume(
        self,
        report: Report | str,
        decision: Any = None,
        /,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Report: ...

    async def aresume(
        self,
        config: Any,
        state: Any = None,
        decision: Any = None,
        job: Job | None = None,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Any:
        """Continue a paused flow: ``await flow.aresume(report_or_run_id, decision)``.

        Works in a new process on the same storage: this flow is passed to the desk as the
        runner. ``aresume(config, state, decision, job)`` is the runner protocol.
        """
        if isinstance(config, RunConfig):
            return await self._continue(config, state, decision, job)
        # user form: aresume(report_or_run_id, decision) -> positions 1 and 2
        return await self.desk.aresume(config, state, runner=self, stream=stream, on_event=on_event)

    def run(
        self, job: Job | str, *, stream: bool | None = None, on_event: EventListener | None = None
    ) -> Report:
        """Synchronous :meth:`arun`; raises ``EventLoopRunningError`` inside a running loop."""
        return run_sync(self.arun(job, stream=stream, on_event=on_event))

    def resume(
        self, report: Report | str, decision: Any = None, *, stream: bool | None = None
    ) -> Report:
        """Synchronous :meth:`aresume`; raises ``EventLoopRunningError`` inside a running loop."""
        return run_sync(self.aresume(report, decision, stream=stream), api="resume")

    def check_resume(self, state: RunState) -> None:
        """Refuse a paused run of another step tree (the desk asks before it claims the run).

        Raises:
            ConfigurationError: the flow's steps changed since the run paused (a step added,
                removed, renamed or moved), the runner of a paused step refuses its state
                (its own ``check_resume``: a nested flow or a workforce that changed), or a
                paused step's job has a response schema this process cannot load (see
                ``Job.from_state``); the run stays paused, resumable with the flow it paused
                in.
        """
        if state.payload.get("signature") != self.signature:
            raise ConfigurationError(
                f"flow {self.name!r} changed since run {state.run_id} paused (its steps differ):"
                " resume it with the flow as it was when it paused; the run stays paused"
            )
        for step, step_state in self._paused_steps(state.payload):
            if step is None:  # under a node of the user's own: its runner is not known
                continue
            check = getattr(step.runner, "check_resume", None)
            try:
                if not self._has_live_job(step_state):
                    Job.from_state(step_state.job)  # its response schema must load here
                if check is not None:
                    check(step_state)  # a nested flow, a workforce, ... that changed refuses
            except ConfigurationError as exc:
                raise ConfigurationError(f"flow {self.name!r}, {step.label}: {exc}") from exc

    def _paused_steps(self, payload: dict[str, Any]) -> list[tuple[Step | None, RunState]]:
        """The paused steps under the stored cursor (none when it is damaged: the resumed
        run fails then)."""
        try:
            return list(paused_steps(self.steps, payload["cursor"]))
        except (LookupError, TypeError, ValidationError):
            return []

    # -- the runner -------------------------------------------------------------------------

    async def _start(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        run = FlowRun(self, config, WorkflowContext(job, config.desk))
        return self._finish(run, job, await run.sequence(self.steps, None))

    async def _continue(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None
    ) -> tuple[Report, RunState]:
        job = job or Job.from_state(state.job)
        payload = state.payload
        if payload.get("signature") != self.signature:
            run = FlowRun(self, config, WorkflowContext(job, config.desk))
            error = f"flow {self.name!r} changed since the run paused; it cannot be resumed"
            return self._finish(run, job, Failed([error]))
        if not self._paused_steps(payload):  # {"index": 9} would end it "completed", None rerun it
            run = FlowRun(self, config, WorkflowContext(job, config.desk))
            error = (
                f"flow {self.name!r}: the stored position of run {state.run_id} names no paused"
                " step (the stored state is damaged); it cannot be resumed"
            )
            return self._finish(run, job, Failed([error]))
        results = [StepOutput.from_json(item) for item in payload["results"]]
        ctx = WorkflowContext(job, config.desk, results, dict(payload["loops"]))
        run = FlowRun(self, config, ctx, dict(payload["totals"]), decision)
        return self._finish(run, job, await run.sequence(self.steps, payload["cursor"]))

    def _finish(self, run: FlowRun, job: Job, outcome: Outcome) -> tuple[Report, RunState]:
        if isinstance(outcome, Paused):
            return self._pause(run, job, outcome.cursor)
        run_id = run.config.run_id
        if isinstance(outcome, Done):
            report = _combined(run_id, run.ctx.results, run.totals)
        else:
            report = Report(run_id=run_id, status="failed", errors=outcome.errors)
            report.metrics = dict(run.totals)
        state = RunState(
            run_id=run_id,
            status=report.status,
            runner_type=self.runner_type,
            runner_name=self.name,
            job=job.to_state(),
            metrics=report.metrics,
        )
        return report, state

    def _pause(self, run: FlowRun, job: Job, cursor: Cursor) -> tuple[Report, RunState]:
        paused = [state for _, state in paused_steps(self.steps, cursor)]
        metrics = sum_metrics(run.totals, *(state.metrics for state in paused))
        active = paused[0]
        payload = {
            "version": STATE_VERSION,
            "signature": self.signature,
            "cursor": cursor,
            "results": [result.to_json() for result in run.ctx.results],
            "loops": run.ctx.loop_iterations,
            "totals": run.totals,
        }
        report = Report(
            run_id=run.config.run_id,
            status="paused",
            pending_action=active.pending_action,
            messages=active.messages,
            tool_calls=active.tool_calls,
            metrics=metrics,
        )
        state = RunState(
            run_id=run.config.run_id,
            status="paused",
            runner_type=self.runner_type,
            runner_name=self.name,
            job=job.to_state(),
            pending_action=active.pending_action,
            metrics=metrics,
            payload=payload,
        )
        return report, state

    # -- live jobs: the exact Job objects of paused steps, for a resume in this process ----

    def keep_live_job(self, state: RunState, job: Job | None) -> None:
        """Remember the job of a step that paused (tools and schemas survive as objects)."""
        if job is not None and state.pending_action is not None:
            self._live_jobs[state.pending_action.action_id] = job

    def _has_live_job(self, state: RunState) -> bool:
        action = state.pending_action
        return action is not None and action.action_id in self._live_jobs

    def take_live_job(self, state: RunState) -> Job | None:
        """The remembered job of a paused step (``None`` in a new process)."""
        if state.pending_action is None:
            return None
        return self._live_jobs.pop(state.pending_action.action_id, None)


def _combined(run_id: str, results: list[StepOutput], metrics: dict[str, Any]) -> Report:
    reports = [result.report for result in results]
    content: str | None = None
    data: Any = None
    if len(results) == 1:
        content, data = reports[0].content, reports[0].data
    elif results:
        content = "\n\n".join(f"## {r.name}\n\n{r.report.content or ''}" for r in results)
        data = [
            {"step": r.name, "content": r.report.content, "data": r.report.data} for r in results
        ]
    return Report(
        run_id=run_id,
        status="completed",
        content=content,
        data=data,
        reasoning_content=reports[-1].reasoning_content if reports else None,
        messages=[message for report in reports for message in report.messages],
        tool_calls=[call for report in reports for call in report.tool_calls],
        metrics=dict(metrics),
    )
