"""Eval data: a case, a score, one case's result and the aggregate of a whole eval."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from deskwork.core._model import DeskworkModel
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.utils import to_jsonable

__all__ = [
    "CaseResult",
    "EvalCase",
    "EvalResult",
    "Score",
    "check_scorers",
    "output_of",
    "scorer_name",
]


class EvalCase(DeskworkModel):
    """One input to run, with what to check about its run.

    ``input`` becomes the job (``Job(input=...)``); pass a :class:`~deskwork.Job` to set a
    ``response_schema`` or other job fields. The case is scored by its own ``scorers`` (plus
    those given to ``evaluate``); a case with neither, but with ``expected``, is scored with
    ``exact()``. A case whose run ends in another status than ``status`` fails.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    input: Any
    """The job input (any JSON value), or a ``Job``."""
    expected: Any = None
    """The expected output: text, or data compared with a structured report's ``data``."""
    scorers: list[Any] = Field(default_factory=list)
    """Scorers for this case only (see :mod:`deskwork.evals`)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form labels (shown in results, passed to judges and scorers)."""
    name: str | None = None
    """Shown in the table; default ``case-<n>``."""
    status: Literal["completed", "paused", "failed"] = "completed"
    """The run status the case expects (``"paused"`` for a case that must ask a person)."""

    @field_validator("scorers")
    @classmethod
    def _callable_scorers(cls, scorers: list[Any]) -> list[Any]:
        check_scorers(scorers)
        return scorers

    @field_validator("input")
    @classmethod
    def _runnable_input(cls, value: Any) -> Any:
        if not isinstance(value, Job):
            Job(input=value)  # None or a blank text: no job to run, no case to score
        return value

    def job(self) -> Job:
        """The job this case runs."""
        return self.input if isinstance(self.input, Job) else Job(input=self.input)


class Score(DeskworkModel):
    """One scorer's verdict on one case: ``value`` in [0, 1] and whether it passes."""

    name: str
    value: float = Field(ge=0.0, le=1.0)
    passed: bool
    reason: str | None = None


class CaseResult(DeskworkModel):
    """What one case produced. ``run_id`` opens the stored run (``deskwork runs show``)."""

    name: str
    input: Any = None
    expected: Any = None
    output: Any = None
    status: str
    """The run's status (``error`` when the run could not start)."""
    run_id: str | None = None
    passed: bool
    scores: list[Score] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    duration_s: float = 0.0


class EvalResult(DeskworkModel):
    """All case results, in case order, and their aggregate."""

    cases: list[CaseResult]

    @property
    def total(self) -> int:
        """How many cases ran."""
        return len(self.cases)

    @property
    def passed(self) -> int:
        """How many cases passed."""
        return sum(1 for case in self.cases if case.passed)

    @property
    def pass_rate(self) -> float:
        """Passed cases / all cases (1.0 for an empty eval)."""
        return self.passed / self.total if self.cases else 1.0

    @property
    def failures(self) -> list[CaseResult]:
        """The cases that did not pass."""
        return [case for case in self.cases if not case.passed]

    def mean_scores(self) -> dict[str, float]:
        """The mean value of each scorer over the cases it scored."""
        totals: dict[str, list[float]] = {}
        for case in self.cases:
            for score in case.scores:
                totals.setdefault(score.name, []).append(score.value)
        return {name: sum(values) / len(values) for name, values in totals.items()}

    def summary(self) -> dict[str, Any]:
        """The aggregate as a JSON-compatible dict."""
        return {
            "total": self.total,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "mean_scores": self.mean_scores(),
        }

    def table(self, *, width: int = 40) -> str:
        """A plain-text table of the cases and a summary line."""
        rows = [("case", "result", "status", "scores", "run id")]
        for case in self.cases:
            scores = " ".join(
                f"{s.name}={s.value:.2f}{'' if s.passed else '✗'}" for s in case.scores
            )
            rows.append(
                (
                    _clip(case.name, width),
                    "PASS" if case.passed else "FAIL",
                    case.status,
                    scores or "-",
                    case.run_id or "-",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                 for row in rows]  # fmt: skip
        lines.insert(1, "  ".join("-" * w for w in widths))
        means = ", ".join(f"{k} {v:.2f}" for k, v in self.mean_scores().items())
        lines.append("")
        lines.append(
            f"{self.passed}/{self.total} passed ({self.pass_rate:.0%})"
            + (f"; mean scores: {means}" if means else "")
        )
        for case in self.failures:
            reasons = [f"{s.name}: {s.reason}" for s in case.scores if not s.passed and s.reason]
            detail = "; ".join(case.errors + reasons) or "failed"
            lines.append(f"  ✗ {case.name}: {_clip(detail, 200)}")
        return "\n".join(lines)


def scorer_name(scorer: Any) -> str:
    """The name a scorer's results are reported under."""
    name = getattr(scorer, "name", None) or getattr(scorer, "__name__", None)
    return str(name or type(scorer).__name__)


def check_scorers(scorers: Any, *, also: Sequence[Any] = ()) -> None:
    """Raise ``ValueError`` unless ``scorers`` is a sequence of callables whose names differ
    from each other and from those of ``also`` (the scorers that score the same cases): two
    scores of one name would be one column of the table and one mean in ``mean_scores``."""
    if isinstance(scorers, str | bytes) or callable(scorers):
        raise ValueError(f"scorers must be a list of scorers, not {scorers!r}")
    seen = {scorer_name(scorer) for scorer in also}
    for scorer in scorers:
        if not callable(scorer):
            raise ValueError(f"scorer {scorer!r} is not callable")
        name = scorer_name(scorer)
        if name in seen:
            raise ValueError(
                f"two scorers are named {name!r}: their scores would merge; give one another"
                " name (name=... of a built-in scorer, else its name attribute)"
            )
        seen.add(name)


def output_of(report: Report) -> Any:
    """What a run produced: the structured ``data`` (as JSON values) if any, else the text."""
    if report.data is not None:
        return to_jsonable(report.data)
    return report.content


def as_text(value: Any) -> str:
    """``value`` as text for text scorers (JSON for data)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(to_jsonable(value), sort_keys=True)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
