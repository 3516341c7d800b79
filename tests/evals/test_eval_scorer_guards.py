"""Scorers that would corrupt or stall an eval: two of one name (their scores merged into
one mean) are refused before any case runs; one that hangs fails its own case's score after
``scorer_timeout`` while the other cases finish."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Worker
from deskwork.evals import EvalCase, contains, evaluate, llm_judge, tool_called
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.utils import check_seconds


def _desk(tmp_path: Path) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(default=lambda messages, tools: reply("the answer is 42"))
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    return desk, adapter


def test_two_shared_scorers_of_one_name_are_refused_before_any_run(tmp_path: Path) -> None:
    # they were reported as one "contains" column, the mean of both (0.5 here)
    desk, adapter = _desk(tmp_path)
    with pytest.raises(ConfigurationError, match="two scorers are named 'contains'"):
        evaluate(Worker(name="w"), [EvalCase(input="hi", expected="42")], desk=desk,
                 scorers=[contains(), contains("never said")])  # fmt: skip
    assert adapter.calls == []
    result = evaluate(Worker(name="w"), [EvalCase(input="hi", expected="42")], desk=desk,
                      scorers=[contains(), contains("never said", name="no lies")])  # fmt: skip
    assert result.mean_scores() == {"contains": 1.0, "no lies": 0.0}


@pytest.mark.parametrize("name", ["", "  ", 5])
def test_a_built_in_scorer_refuses_a_blank_name(name: Any) -> None:
    with pytest.raises(ConfigurationError, match="a scorer's name must be a non-empty string"):
        contains(name=name)


def test_a_case_scorer_named_like_a_shared_one_is_refused_naming_the_case(
    tmp_path: Path,
) -> None:
    desk, adapter = _desk(tmp_path)
    cases = [EvalCase(input="hi", name="ok"),
             EvalCase(input="hi", name="clash", scorers=[tool_called("search")])]  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"case 'clash'.*'tool_called:search'"):
        evaluate(Worker(name="w"), cases, desk=desk,
                 scorers=[tool_called("search", times=2)])  # fmt: skip
    assert adapter.calls == []


def test_a_case_with_two_scorers_of_one_name_is_refused_when_made() -> None:
    with pytest.raises(ValidationError, match="two scorers are named 'llm_judge'"):
        EvalCase(input="hi", scorers=[llm_judge("polite", model="m"),
                                      llm_judge("short", model="m")])  # fmt: skip
    judges = [llm_judge("polite", model="m"), llm_judge("short", model="m", name="brevity")]
    assert len(EvalCase(input="hi", scorers=judges).scorers) == 2


def test_same_named_scorers_of_different_cases_share_their_mean(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path)
    cases = [EvalCase(input="a", scorers=[contains("42")]),
             EvalCase(input="b", scorers=[contains("nope")])]  # fmt: skip
    result = evaluate(Worker(name="w"), cases, desk=desk)
    assert result.mean_scores() == {"contains": 0.5}


def test_a_hanging_scorer_fails_its_case_after_the_timeout(tmp_path: Path) -> None:
    release = threading.Event()

    def blocks(case: EvalCase, report: Any) -> bool:  # a sync call that never answers
        return release.wait(30)

    async def never(case: EvalCase, report: Any) -> bool:
        await asyncio.Event().wait()
        return True

    desk, _ = _desk(tmp_path)
    cases = [
        EvalCase(input="a", name="sync", scorers=[blocks]),
        EvalCase(input="b", name="async", scorers=[never]),
        EvalCase(input="c", name="fine", expected="42", scorers=[contains()]),
    ]
    started = time.perf_counter()
    try:
        result = evaluate(Worker(name="w"), cases, desk=desk, scorer_timeout=0.2, concurrency=3)
    finally:
        release.set()
    assert time.perf_counter() - started < 5
    sync, async_, fine = result.cases
    assert (sync.passed, async_.passed, fine.passed) == (False, False, True)
    for case in (sync, async_):
        assert case.status == "completed" and case.run_id is not None
        (score,) = case.scores
        assert (score.value, score.passed) == (0.0, False)
        assert score.reason == "scorer timed out after 0.2s"
    assert "scorer timed out after 0.2s" in result.table()


def test_scorers_within_the_timeout_score_as_before(tmp_path: Path) -> None:
    class Grader:
        name = "grader"

        async def __call__(self, case: EvalCase, report: Any) -> float:
            await asyncio.sleep(0)
            return 0.75

    def late_sync(case: EvalCase, report: Any) -> Any:  # a def returning a coroutine
        return Grader()(case, report)

    desk, _ = _desk(tmp_path)
    result = evaluate(Worker(name="w"), [EvalCase(input="a", expected="42")], desk=desk,
                      scorers=[contains(), Grader(), late_sync])  # fmt: skip
    values = {s.name: s.value for s in result.cases[0].scores}
    assert values == {"contains": 1.0, "grader": 0.75, "late_sync": 0.75}


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "60"])
def test_a_scorer_timeout_no_scorer_could_meet_is_refused(tmp_path: Path, bad: Any) -> None:
    desk, adapter = _desk(tmp_path)
    with pytest.raises(ConfigurationError) as refused:
        evaluate(Worker(name="w"), [EvalCase(input="hi")], desk=desk, scorer_timeout=bad)
    assert adapter.calls == []
    with pytest.raises(ConfigurationError) as standard:  # every timeout's own words
        check_seconds(bad, "scorer_timeout")
    assert str(refused.value) == str(standard.value)


def test_no_scorer_timeout_runs_sync_scorers_on_the_loop_thread(tmp_path: Path) -> None:
    threads: list[int] = []

    def where(case: EvalCase, report: Any) -> bool:
        threads.append(threading.get_ident())
        return True

    desk, _ = _desk(tmp_path)
    evaluate(Worker(name="w"), [EvalCase(input="a", scorers=[where])], desk=desk,
             scorer_timeout=None)  # fmt: skip
    assert threads == [threading.get_ident()]
