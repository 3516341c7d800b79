"""Evals refuse, before any case runs, what would fail every case or could never pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Worker
from deskwork.evals import EvalCase, contains, evaluate, json_schema, llm_judge, tool_called
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def _desk(tmp_path: Path) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(default=lambda messages, tools: reply("ok"))
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    return desk, adapter


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scorers": "exact"}, "scorers must be a list of scorers, not 'exact'"),
        ({"scorers": [5]}, "scorer 5 is not callable"),
        ({"concurrency": 1.5}, "concurrency must be an int >= 1, not 1.5"),
        ({"desk": None}, "desk must be a Desk, not NoneType"),
    ],
)
def test_bad_evaluate_arguments_fail_before_any_run(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    desk, adapter = _desk(tmp_path)
    arguments: dict[str, Any] = {"desk": desk, **options}
    with pytest.raises(ConfigurationError, match=message):
        evaluate(Worker(name="w"), [EvalCase(input="hi")], **arguments)
    assert adapter.calls == []


def test_a_case_checks_its_status_and_scorers_when_made() -> None:
    with pytest.raises(ValidationError, match="status"):
        EvalCase(input="hi", status="done")  # type: ignore[arg-type]  # it could never pass
    with pytest.raises(ValidationError, match="scorer 'contains' is not callable"):
        EvalCase(input="hi", scorers=["contains"])
    assert EvalCase(input="hi", status="paused").status == "paused"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tool_called("search", times=0), "times must be an int >= 1, not 0"),
        (lambda: contains(5), "text must be a non-empty string, not 5"),
        (lambda: contains(""), "text must be a non-empty string"),
        (lambda: json_schema(5), "json_schema: cannot validate 5"),  # failed in every case
        (lambda: llm_judge(5, model="m"), "llm_judge needs criteria \\(text\\), not 5"),
        (lambda: llm_judge("polite", model="m", threshold="0.5"), "threshold must be in"),
    ],
)
def test_a_built_in_scorer_refuses_an_argument_no_case_could_pass(make: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make()


@pytest.mark.parametrize("blank", [None, "", "   "])
def test_a_case_without_a_job_to_run_is_refused_when_made(blank: object) -> None:
    # it was taken, then its Job raised out of evaluate(): every other case's result was lost
    with pytest.raises(ValidationError, match="Job needs an input"):
        EvalCase(input=blank)


SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def test_a_scorer_s_error_is_redacted_in_results_and_table(tmp_path: Path) -> None:
    def leaky(case: EvalCase, report: Any) -> bool:
        raise RuntimeError(f"judge endpoint refused key {SECRET}")

    desk, _ = _desk(tmp_path)
    result = evaluate(Worker(name="w"), [EvalCase(input="hi")], desk=desk, scorers=[leaky])
    reason = result.cases[0].scores[0].reason
    assert reason is not None and reason.startswith("scorer raised RuntimeError: judge endpoint")
    assert SECRET not in result.model_dump_json() and SECRET not in result.table()
