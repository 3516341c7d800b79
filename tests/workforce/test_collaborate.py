"""Collaborate mode: concurrency vs sequence, reducers, pause/resume, stale state."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel
from wfkit import (
    MODEL,
    Model,
    assert_metrics_match_llm_events,
    deploy,
    lookup,
    make_desk,
    of_type,
    types,
    worker,
)

from deskwork import Desk, Job, Report, Workforce
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import Turn, call_tool, fail, structured
from deskwork.workforce import MemberReport, default_reducer
from gatekit import GatedAdapter


async def test_ten_toolless_workers_run_concurrently() -> None:
    names = [f"w{i}" for i in range(10)]
    adapter = GatedAdapter(10, default=Model())  # run one after another, the calls fail
    wf = Workforce([worker(n) for n in names], mode="collaborate")
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    report = await desk.arun(wf, Job(input="go"))

    assert report.status == "completed", report.errors
    assert report.content == "\n\n".join(f"## {n}\n{n} done" for n in names)  # worker order
    assert report.metrics["llm_calls"] == 10
    assert_metrics_match_llm_events(report)


async def test_workers_with_tools_run_one_after_another() -> None:
    model = Model(
        latency=0.02,
        a=[call_tool("lookup", query="x"), "a says"],
        b=[call_tool("lookup", query="y"), "b says"],
    )
    wf = Workforce([worker("a", lookup), worker("b", lookup)], mode="collaborate")
    report = await make_desk(model).arun(wf, Job(input="go"))
    assert model.order() == ["a", "a", "b", "b"]  # concurrently it would interleave
    assert report.content == "## a\na says\n\n## b\nb says"
    assert report.metrics["tool_calls"] == 2 and len(report.tool_calls) == 2


async def test_tools_from_the_job_override_also_make_the_run_sequential() -> None:
    model = Model(
        latency=0.02, a=[call_tool("lookup", query="x")], b=[call_tool("lookup", query="y")]
    )
    wf = Workforce([worker("a"), worker("b")], mode="collaborate")
    await make_desk(model).arun(wf, Job(input="go", tools_override=[lookup]))
    assert model.order() == ["a", "a", "b", "b"]


class Verdict(BaseModel):
    score: int


async def test_default_reducer_collects_data_per_worker_and_keeps_failures() -> None:
    model = Model(
        a=[structured({"score": 1})],
        b=[structured({"score": 2})],
        c=[fail(RuntimeError("provider down"))],
    )
    wf = Workforce([worker("a"), worker("b"), worker("c")], mode="collaborate")
    report = await make_desk(model).arun(wf, Job(input="rate", response_schema=Verdict))

    assert report.status == "failed"
    assert report.data == {"a": Verdict(score=1), "b": Verdict(score=2)}
    assert report.errors == ["c: model call failed: RuntimeError: provider down"]
    assert report.content is not None and report.content.startswith('## a\n{"score":1}')
    assert types(report.events)[-2:] == ["workforce.completed", "run.failed"]
    assert of_type(report, "workforce.completed")[0].payload == {"status": "failed"}


def test_default_reducer_on_plain_reports_numbers_the_workers() -> None:
    reports = [
        Report(run_id="r", status="completed", content="x", metrics={"llm_calls": 1, "cost": 0.5}),
        Report(run_id="r", status="completed", content=None, metrics={"llm_calls": 2}),
    ]
    combined = default_reducer(reports)
    assert combined.content == "## worker_1\nx\n\n## worker_2"
    assert combined.data is None and combined.status == "completed"
    assert combined.metrics == {"llm_calls": 3, "cost": 0.5}


async def test_custom_reducer_gets_named_member_reports_and_metrics_are_totalled() -> None:
    seen: list[list[Report]] = []

    def shortest(reports: list[Report]) -> Report:
        seen.append(reports)
        best = min(reports, key=lambda r: len(r.content or ""))
        return best.model_copy(update={"content": f"best: {best.content}", "metrics": {}})

    model = Model(a=[Turn(content="long answer", cost=0.25)], b=[Turn(content="short", cost=0.5)])
    wf = Workforce([worker("a"), worker("b")], mode="collaborate", reducer=shortest)
    report = await make_desk(model).arun(wf, Job(input="go"))

    assert report.content == "best: short"
    (reports,) = seen
    assert all(isinstance(r, MemberReport) for r in reports)
    assert [r.worker for r in reports if isinstance(r, MemberReport)] == ["a", "b"]
    assert report.metrics["llm_calls"] == 2 and report.metrics["cost"] == 0.75
    assert_metrics_match_llm_events(report)


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (ValueError("cannot combine"), "reducer failed: ValueError: cannot combine"),
        (RuntimeError(), "reducer failed: RuntimeError"),  # was "RuntimeError: "
    ],
)
async def test_a_reducer_that_raises_fails_the_run(raised: Exception, error: str) -> None:
    def broken(reports: list[Report]) -> Report:
        raise raised

    wf = Workforce([worker("a")], mode="collaborate", reducer=broken)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert report.errors == [error]
    assert report.metrics["llm_calls"] == 1


def _trio() -> Workforce:
    return Workforce(
        [worker("a", lookup), worker("b", deploy), worker("c")], mode="collaborate", name="crew"
    )


def _trio_model() -> Model:
    return Model(
        a=[call_tool("lookup", query="q"), "a found it"],
        b=[call_tool("deploy", target="prod"), "b deployed"],
    )


async def test_pause_stores_completed_reports_and_resume_runs_the_rest() -> None:
    model = _trio_model()
    desk = make_desk(model)
    paused = await desk.arun(_trio(), Job(input="go"))

    assert paused.status == "paused" and paused.pending_action is not None
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    payload = record.state.payload
    assert payload["pending_worker_index"] == 1 and payload["worker"] == "b"
    assert [r["worker"] for r in payload["completed_reports"]] == ["a"]
    assert payload["completed_reports"][0]["content"] == "a found it"
    assert payload["root_job"]["input"] == "go"
    assert paused.metrics["llm_calls"] == 3

    done = await desk.aresume(paused, "yes")
    assert done.status == "completed"
    assert model.order() == ["a", "a", "b", "b", "c"]  # a is not run again
    assert done.content == "## a\na found it\n\n## b\nb deployed\n\n## c\nc done"
    assert_metrics_match_llm_events(done)
    assert done.metrics["llm_calls"] == 5


async def test_collaborate_resumes_in_a_new_process(tmp_path: Path) -> None:
    paused = await make_desk(_trio_model(), tmp_path).arun(_trio(), Job(input="go"))
    model2 = Model(b=["b deployed later"])
    done = await make_desk(model2, tmp_path).aresume(paused.run_id, True, runner=_trio())
    assert done.status == "completed"
    assert model2.order() == ["b", "c"]
    assert done.content == "## a\na found it\n\n## b\nb deployed later\n\n## c\nc done"
    assert done.metrics["llm_calls"] == 5


async def test_resume_with_moved_or_removed_workers_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    paused = await make_desk(_trio_model(), tmp_path).arun(_trio(), Job(input="go"))
    desk = make_desk(Model(b=["b deployed later"]), tmp_path)
    reordered = Workforce(
        [worker("b", deploy), worker("a", lookup), worker("c")], mode="collaborate", name="crew"
    )
    shorter = Workforce([worker("a", lookup)], mode="collaborate", name="crew")
    for changed in (reordered, shorter):
        with pytest.raises(ConfigurationError, match=r"index 1 \('b'\) no longer matches"):
            await desk.aresume(paused.run_id, True, runner=changed)
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"
    done = await desk.aresume(paused.run_id, True, runner=_trio())
    assert done.status == "completed" and "## b\nb deployed later" in (done.content or "")
