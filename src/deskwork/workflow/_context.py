"""What a flow's predicates, selectors and job builders see: :class:`WorkflowContext`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.utils import to_jsonable

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = ["StepOutput", "WorkflowContext"]


@dataclass(frozen=True, slots=True)
class StepOutput:
    """The report of one completed step, with the step's name."""

    name: str
    """The step's name (``Step(name=...)``, else its runner's name)."""
    report: Report
    """The step's completed report."""

    def to_json(self) -> dict[str, Any]:
        """A JSON form for the run store (events are left out: they are in the run log)."""
        report = self.report.model_dump(mode="json", exclude={"events", "data"})
        report["data"] = to_jsonable(self.report.data)
        return {"name": self.name, "report": report}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepOutput:
        """Rebuild an output stored with :meth:`to_json` (``report.data`` comes back as JSON)."""
        return cls(name=data["name"], report=Report.model_validate(data["report"]))


class WorkflowContext:
    """The state of a flow run, passed to predicates, selectors and job builders.

    ``outputs`` are the reports of the steps completed so far, in order (failed and paused
    steps are not outputs). Inside a ``Parallel`` branch, the context holds the outputs
    from before the ``Parallel`` plus the branch's own; the branches' outputs join the
    flow's, in branch order, when the whole ``Parallel`` completes.
    """

    __slots__ = ("_loops", "desk", "job", "results")

    def __init__(
        self,
        job: Job,
        desk: Desk | None = None,
        results: list[StepOutput] | None = None,
        loop_iterations: dict[str, int] | None = None,
    ) -> None:
        self.job = job
        """The flow's job."""
        self.desk = desk
        """The desk running the flow (``None`` when the flow runs without one)."""
        self.results: list[StepOutput] = results if results is not None else []
        """Completed steps as ``(name, report)`` pairs, in order."""
        self._loops: dict[str, int] = loop_iterations if loop_iterations is not None else {}

    @property
    def outputs(self) -> list[Report]:
        """The reports of the completed steps, in order (a new list on each access)."""
        return [result.report for result in self.results]

    def output(self, name: str) -> Report | None:
        """The latest completed report of the step called ``name``, or ``None``."""
        for result in reversed(self.results):
            if result.name == name:
                return result.report
        return None

    def loop_iteration(self, name: str) -> int:
        """The current (or last) iteration of the loop called ``name``; 0 before it starts."""
        return self._loops.get(name, 0)

    def set_loop_iteration(self, name: str, iteration: int) -> None:
        """Record a loop's iteration (used by ``Loop``)."""
        self._loops[name] = iteration

    @property
    def loop_iterations(self) -> dict[str, int]:
        """A copy of every loop's iteration counter."""
        return dict(self._loops)

    def fork(self, results: list[StepOutput]) -> WorkflowContext:
        """A context for a ``Parallel`` branch: these outputs plus ``results``.

        Loop counters are shared with this context.
        """
        return WorkflowContext(self.job, self.desk, [*self.results, *results], self._loops)
