"""An LLM judge: a model grades the output against criteria, through any deskwork adapter."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import Field

from deskwork.core._model import DeskworkModel
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.evals._case import EvalCase, Score, output_of
from deskwork.exceptions import ConfigurationError
from deskwork.utils import is_number, to_jsonable

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.runtime.desk import Desk

__all__ = ["JudgeVerdict", "llm_judge"]

_INSTRUCTIONS = (
    "You are a strict evaluator. You get grading criteria, the task given to an AI agent,"
    " the expected answer when there is one, and the agent's actual output. Grade only the"
    " actual output against the criteria. Answer with a score from 0.0 (fails the criteria)"
    " to 1.0 (fully meets them) and a one-sentence reason."
)


class JudgeVerdict(DeskworkModel):
    """The judge's structured answer."""

    score: float = Field(ge=0.0, le=1.0)
    reason: str


class llm_judge:  # lowercase: used like a function
    """Scores a case by asking a model whether the output meets ``criteria``.

    The judge is a worker with a structured answer (:class:`JudgeVerdict`), run on its own
    desk: ``desk=`` (so judge runs are stored where you want them), else a desk with
    in-memory stores around ``adapter`` (any :class:`~deskwork.adapters.BaseModelAdapter`,
    e.g. a ``ScriptedAdapter`` in tests) or around the LiteLLM ``model``. A judge run that
    fails scores 0 with the run's error as the reason.

    Args:
        criteria: What a good output does, in plain words.
        adapter: The judge's model adapter.
        model: The model name passed to the adapter (LiteLLM string without ``adapter``).
        desk: A desk to run the judge on (instead of ``adapter``/``model``).
        threshold: The score at which a case passes.
        name: The score's name.
    """

    def __init__(
        self,
        criteria: str,
        *,
        adapter: BaseModelAdapter | None = None,
        model: str | None = None,
        desk: Desk | None = None,
        threshold: float = 0.5,
        name: str = "llm_judge",
    ) -> None:
        if not isinstance(criteria, str) or not criteria.strip():
            raise ConfigurationError(f"llm_judge needs criteria (text), not {criteria!r}")
        if desk is None and adapter is None and model is None:
            raise ConfigurationError("llm_judge needs an adapter, a model or a desk")
        if not is_number(threshold) or not 0.0 <= threshold <= 1.0:
            raise ConfigurationError(f"llm_judge threshold must be in [0, 1], not {threshold!r}")
        self.criteria = criteria
        self.threshold = threshold
        self.name = name
        self._adapter = adapter
        self._model = model
        self._desk = desk
        self._worker: Any = None

    def _judge_desk(self) -> Desk:
        if self._desk is None:
            from deskwork.memory.simple import InMemoryMemoryStore
            from deskwork.runtime.desk import Desk
            from deskwork.store.memory import InMemoryRunStore

            self._desk = Desk(
                model=self._model or "judge",
                adapter=self._adapter,
                run_store=InMemoryRunStore(),
                memory_store=InMemoryMemoryStore(),
            )
        return self._desk

    async def __call__(self, case: EvalCase, report: Report) -> Score:
        from deskwork.runtime.worker import Worker

        if self._worker is None:
            self._worker = Worker(name=self.name, instructions=_INSTRUCTIONS)
        question = {
            "criteria": self.criteria,
            "task": to_jsonable(case.job().input),
            "expected": to_jsonable(case.expected),
            "actual_output": output_of(report),
        }
        job = Job(
            input=json.dumps(question, ensure_ascii=False),
            response_schema=JudgeVerdict,
            metadata={"eval_case": case.name, "judged_run_id": report.run_id},
        )
        verdict = await self._judge_desk().arun(self._worker, job)
        if verdict.status != "completed" or not isinstance(verdict.data, JudgeVerdict):
            why = "; ".join(verdict.errors) or f"judge run ended {verdict.status}"
            return Score(name=self.name, value=0.0, passed=False, reason=f"judge failed: {why}")
        data = verdict.data
        return Score(
            name=self.name,
            value=data.score,
            passed=data.score >= self.threshold,
            reason=data.reason,
        )
