"""The runner protocol: what the Desk can start and resume."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig

__all__ = ["Runner"]


@runtime_checkable
class Runner(Protocol):
    """Anything a Desk runs: Worker, Workforce, Flow, BlackboardArchitecture, ...

    ``runner_type`` and ``name`` identify the runner in stored state, so a paused run can
    find its runner again (in another process, once the runner is registered).

    A runner may also define ``check_resume(state: RunState) -> None``: the desk calls it
    before it claims a paused run, and an exception (a ``ConfigurationError`` saying why:
    the runner changed since the pause) refuses the resume with the run still paused.
    """

    name: str
    runner_type: str

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Start a run."""
        ...

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Continue a paused run."""
        ...
