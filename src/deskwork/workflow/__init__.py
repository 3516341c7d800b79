"""Workflows: compose workers and workforces into a flow of steps.

::

    flow = desk.flow([
        Step(analyst),
        Parallel(Step(researcher), Step(critic)),
        Router(lambda ctx: "short" if ... else "long", {"short": [...], "long": [...]}),
        Loop([Step(editor)], stop=lambda ctx: ..., max_iterations=3, name="edit"),
    ])
    report = flow.run(Job(input="..."))
    if report.status == "paused":
        report = flow.resume(report, True)

Nodes: :class:`Step` (a runner, with an optional ``job_builder``), :class:`Parallel`,
:class:`Condition` / :class:`AsyncCondition`, :class:`Router`, :class:`Loop` /
:class:`AsyncLoop`. Composite nodes stop at the first paused or failed step; a paused
flow resumes exactly at the paused step, in this process or a new one.
"""

from deskwork.workflow._context import StepOutput, WorkflowContext
from deskwork.workflow._flow import Flow
from deskwork.workflow._nodes import (
    AsyncCondition,
    AsyncLoop,
    Condition,
    Loop,
    Node,
    Parallel,
    Router,
    Step,
)

__all__ = [
    "AsyncCondition",
    "AsyncLoop",
    "Condition",
    "Flow",
    "Loop",
    "Node",
    "Parallel",
    "Router",
    "Step",
    "StepOutput",
    "WorkflowContext",
]
