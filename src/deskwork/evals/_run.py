"""``evaluate``/``aevaluate``: run every case through a desk, score it, aggregate."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from deskwork._aio import gather_or_cancel
from deskwork._sync import run_sync
from deskwork.core.redact import describe_exception
from deskwork.core.report import Report
from deskwork.evals._case import (
    CaseResult,
    EvalCase,
    EvalResult,
    Score,
    check_scorers,
    output_of,
)
from deskwork.evals._scorers import DEFAULT_SCORER_TIMEOUT, exact, run_scorer
from deskwork.exceptions import ConfigurationError
from deskwork.utils import check_seconds, is_integer, to_jsonable

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk
    from deskwork.runtime.runner import Runner

__all__ = ["aevaluate", "evaluate"]


async def aevaluate(
    runner: Runner,
    cases: Iterable[EvalCase],
    *,
    desk: Desk,
    scorers: Sequence[Any] = (),
    concurrency: int = 1,
    scorer_timeout: float | None = DEFAULT_SCORER_TIMEOUT,
) -> EvalResult:
    """Run each case as its own run of ``runner`` on ``desk`` and score it.

    Every case's run is stored like any other run (its ``run_id`` is in the result). A run
    that fails, a case that cannot start and a scorer that raises all make that case fail
    with the reason; so does a scorer that outlasts ``scorer_timeout``. None stops the eval.

    Args:
        runner: A worker, workforce, flow or any other runner.
        cases: The cases, run in order (results keep that order).
        desk: The desk that runs them (its model, stores and event bus).
        scorers: Scorers for every case, after each case's own scorers.
        concurrency: How many cases run at once.
        scorer_timeout: Seconds each scorer may take on a case (``None``: no limit). With
            a limit, sync scorers run on the desk's tool threads (so one that blocks holds
            neither the other cases nor its timeout); one that outlasts it scores 0.

    Returns:
        The per-case results and their aggregate.
    """
    _check_arguments(desk, scorers, concurrency, scorer_timeout)
    items = _checked_cases(cases, scorers)
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int, case: EvalCase) -> CaseResult:
        async with gate:
            return await _run_case(runner, desk, case, index, list(scorers), scorer_timeout)

    results = await gather_or_cancel(*(one(i, c) for i, c in enumerate(items)))
    return EvalResult(cases=results)


def evaluate(
    runner: Runner,
    cases: Iterable[EvalCase],
    *,
    desk: Desk,
    scorers: Sequence[Any] = (),
    concurrency: int = 1,
    scorer_timeout: float | None = DEFAULT_SCORER_TIMEOUT,
) -> EvalResult:
    """Synchronous :func:`aevaluate`; raises ``EventLoopRunningError`` inside a running loop."""

    async def whole() -> EvalResult:
        result = await aevaluate(
            runner,
            cases,
            desk=desk,
            scorers=scorers,
            concurrency=concurrency,
            scorer_timeout=scorer_timeout,
        )
        await desk.event_bus.await_pending()  # async handlers the runs scheduled
        return result

    return run_sync(whole(), api="evaluate")


def _check_arguments(desk: Any, scorers: Any, concurrency: Any, scorer_timeout: Any) -> None:
    from deskwork.runtime.desk import Desk

    if not isinstance(desk, Desk):
        raise ConfigurationError(f"desk must be a Desk, not {type(desk).__name__}")
    if not is_integer(concurrency) or concurrency < 1:
        raise ConfigurationError(f"concurrency must be an int >= 1, not {concurrency!r}")
    check_seconds(scorer_timeout, "scorer_timeout")
    try:
        check_scorers(scorers)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


def _checked_cases(cases: Iterable[EvalCase], shared: Sequence[Any]) -> list[EvalCase]:
    """The cases, each an ``EvalCase`` whose scorers' names differ from the shared ones'."""
    items = list(cases)
    for index, item in enumerate(items):
        if not isinstance(item, EvalCase):
            raise ConfigurationError(f"cases must be EvalCase objects, not {type(item).__name__}")
        try:
            check_scorers(item.scorers, also=shared)
        except ValueError as exc:
            name = item.name or f"case-{index + 1}"
            raise ConfigurationError(f"case {name!r} and evaluate(scorers=...): {exc}") from None
    return items


async def _run_case(
    runner: Runner,
    desk: Desk,
    case: EvalCase,
    index: int,
    shared: list[Any],
    timeout: float | None,
) -> CaseResult:
    name = case.name or f"case-{index + 1}"
    case = case if case.name else case.model_copy(update={"name": name})
    started = time.perf_counter()
    base: dict[str, Any] = {
        "name": name,
        "input": to_jsonable(case.job().input),
        "expected": to_jsonable(case.expected),
        "metadata": to_jsonable(case.metadata),  # free-form: a label may be any object
    }
    try:
        report = await desk.arun(runner, case.job())
    except Exception as exc:  # e.g. a ConfigurationError: the case could not start
        why = f"run did not start: {describe_exception(exc)}"
        return CaseResult(
            **base, status="error", passed=False, errors=[why],
            duration_s=time.perf_counter() - started,
        )  # fmt: skip
    scores = await _scores(case, report, shared, timeout, desk)
    errors = list(report.errors)
    if report.status != case.status:
        errors.insert(0, f"run ended {report.status}, the case expects {case.status}")
    return CaseResult(
        **base,
        output=output_of(report),
        status=report.status,
        run_id=report.run_id,
        passed=report.status == case.status and all(s.passed for s in scores),
        scores=scores,
        errors=errors,
        duration_s=time.perf_counter() - started,
    )


async def _scores(
    case: EvalCase, report: Report, shared: list[Any], timeout: float | None, desk: Desk
) -> list[Score]:
    chosen = list(case.scorers) + shared
    if not chosen and case.expected is not None:
        chosen = [exact()]
    pool = None if timeout is None else desk.tool_pool
    return [await run_scorer(scorer, case, report, timeout=timeout, pool=pool) for scorer in chosen]
