"""FlowRun: the one walker of a flow's step tree.

It runs sequences (short-circuiting on a pause or failure), runs steps (events, metrics,
outputs, pause capture), turns exceptions from user callbacks into failures, and finds
the paused steps in a cursor. Node types only add their own choice (see ``_nodes``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deskwork.core.event import EventType
from deskwork.core.job import Job
from deskwork.core.metrics import sum_metrics
from deskwork.core.redact import describe_exception
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig
from deskwork.workflow._context import StepOutput, WorkflowContext
from deskwork.workflow._nodes import DONE, Cursor, Done, Failed, Node, Outcome, Paused, Step, nest

if TYPE_CHECKING:
    from deskwork.workflow._flow import Flow

__all__ = ["FlowRun"]


@dataclass(slots=True)
class FlowRun:
    """One execution (or resumption) of a flow; a ``Parallel`` branch gets a fork."""

    flow: Flow
    config: RunConfig
    ctx: WorkflowContext
    totals: dict[str, Any] = field(default_factory=dict)
    """Metrics of every finished step (shared by forks)."""
    decision: Any = None
    """The resume decision, delivered to the paused step being continued."""
    base: int = 0
    """Outputs in ``ctx`` that existed before this fork (the rest are the fork's own)."""

    @property
    def new_results(self) -> list[StepOutput]:
        """Outputs this fork added."""
        return self.ctx.results[self.base :]

    def fork(self, results: list[StepOutput]) -> FlowRun:
        """A run for one ``Parallel`` branch that already produced ``results``."""
        return dataclasses.replace(self, ctx=self.ctx.fork(results), base=len(self.ctx.results))

    async def node(self, node: Node, cursor: Cursor | None) -> Outcome:
        """Run or continue ``node``; an exception becomes a failure naming the node."""
        try:
            return await node.execute(self, cursor)
        except Exception as exc:
            return Failed([f"{node.label}: {describe_exception(exc)}"])

    async def sequence(self, nodes: Sequence[Node], cursor: Cursor | None) -> Outcome:
        """Run ``nodes`` in order from the cursor; stop at the first pause or failure."""
        start, child = (cursor["index"], cursor["child"]) if cursor else (0, None)
        for index in range(start, len(nodes)):
            outcome = await self.node(nodes[index], child)
            child = None
            if not isinstance(outcome, Done):
                return nest(outcome, index=index)
        return DONE

    async def step(self, step: Step, cursor: Cursor | None) -> Outcome:
        """Run a step's runner inside this run, or resume it with the decision."""
        self.config.emit(EventType.STEP_STARTED, step.name, {})
        report, state, job = await self._call_runner(step, cursor)
        return self._record(step, report, state, job)

    async def fan_out(self, steps: Sequence[Step], distribute: bool | str, name: str) -> Outcome:
        """Run ``steps`` at once as child durable runs on the workers of a queue
        (``Parallel(distribute=...)``); their outputs join in step order."""
        from deskwork.runtime._durable_fanout import fan_out

        forks = [self.fork([]) for _ in steps]
        jobs: list[Job | Report] = []
        for step, fork in zip(steps, forks, strict=True):
            self.config.emit(EventType.STEP_STARTED, step.name, {})
            jobs.append(await fork._build_job(step))
        built = {i: job for i, job in enumerate(jobs) if isinstance(job, Job)}  # by position
        members = [(steps[i].runner, job) for i, job in built.items()]
        fanned = iter(  # child run ids follow the step positions, whichever jobs were built
            await fan_out(self.config, members, distribute, name, positions=list(built))
            if built
            else []
        )
        outcomes = [  # a step whose job_builder failed has its failed report in place of a job
            fork._record(step, next(fanned), None, job)
            if isinstance(job, Job)
            else fork._record(step, job, None, None)
            for fork, step, job in zip(forks, steps, jobs, strict=True)
        ]
        errors = [e for outcome in outcomes if isinstance(outcome, Failed) for e in outcome.errors]
        if errors:
            return Failed(errors)
        for fork in forks:
            self.ctx.results.extend(fork.new_results)
        return DONE

    def _record(
        self, step: Step, report: Report, state: RunState | None, job: Job | None
    ) -> Outcome:
        """The outcome of a step whose runner returned ``report`` (and ``state``)."""
        if report.status == "paused" and state is not None:
            self.config.emit(EventType.STEP_PAUSED, step.name, {"status": "paused"})
            self.flow.keep_live_job(state, job)
            return Paused({"state": state.model_dump(mode="json")})
        self.config.emit(EventType.STEP_COMPLETED, step.name, {"status": report.status})
        # in place: the branches of a Parallel share one totals dict
        self.totals.update(sum_metrics(self.totals, report.metrics, {"steps": 1}))
        if report.status == "completed":
            self.ctx.results.append(StepOutput(step.name, report))
            return DONE
        errors = report.errors or [f"ended with status {report.status!r}"]
        return Failed([f"step {step.name!r}: {error}" for error in errors])

    async def _call_runner(
        self, step: Step, cursor: Cursor | None
    ) -> tuple[Report, RunState | None, Job | None]:
        job: Job | None = None
        try:
            if cursor is None:
                job = await step.build_job(self.ctx)
                report, state = await step.runner.arun(self.config, job)
            else:
                paused = RunState.model_validate(cursor["state"])
                job = self.flow.take_live_job(paused) or Job.from_state(paused.job)
                report, state = await step.runner.aresume(self.config, paused, self.decision, job)
        except Exception as exc:
            return self._failed(exc), None, job
        return report, state, job

    async def _build_job(self, step: Step) -> Job | Report:
        """The job of a fresh run of ``step``, or the failed report of a ``job_builder`` that
        raised (as :meth:`_call_runner` reports it)."""
        try:
            return await step.build_job(self.ctx)
        except Exception as exc:
            return self._failed(exc)

    def _failed(self, exc: Exception) -> Report:
        """The report of a step whose job or runner raised ``exc``."""
        return Report(run_id=self.config.run_id, status="failed", errors=[describe_exception(exc)])
