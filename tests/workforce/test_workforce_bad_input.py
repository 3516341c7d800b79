"""Workforce misuse: wrong member and limit types, reducers that return the wrong thing."""

from __future__ import annotations

from typing import Any

import pytest
from wfkit import Model, make_desk, worker

from deskwork import Job, Report, Workforce


@pytest.mark.parametrize("returned", [None, "a text", {"content": "x"}])
async def test_a_reducer_returning_no_report_fails_the_run_saying_so(returned: Any) -> None:
    wf = Workforce([worker("a"), worker("b")], mode="collaborate", reducer=lambda _: returned)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert report.errors == [f"reducer returned {type(returned).__name__}, not a Report"]
    assert report.metrics["llm_calls"] == 2


async def test_a_reducer_error_is_redacted_in_the_report() -> None:
    def leaky(reports: list[Report]) -> Report:
        raise RuntimeError("cannot reach postgresql://app:hunter2@db/x")

    wf = Workforce([worker("a")], mode="collaborate", reducer=leaky)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert "hunter2" not in report.errors[0]
    assert report.errors[0].startswith("reducer failed: RuntimeError: cannot reach postgresql://")
