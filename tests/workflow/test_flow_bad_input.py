"""Flow misuse: wrong node arguments are configuration errors when the flow is built."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flowkit import Approvals, Scripts, asks_approval, make_desk, worker

from deskwork import ConfigurationError, Job, Workforce
from deskwork.workflow import Condition, Loop, Parallel, Router, Step


def _true(ctx: Any) -> bool:
    return True


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Step("writer"), "Step 'step' expects a runner (a Worker, Workforce, Flow, ...)"),
        (lambda: Step(None), "got NoneType"),
        (lambda: Step(worker("a"), job_builder="hi"), "Step 'a': job_builder must be a function"),
        (lambda: Loop(Step(worker("a")), _true, max_iterations="3"), "integer >= 1, got '3'"),
        (lambda: Loop(Step(worker("a")), _true, max_iterations=2.5), "integer >= 1, got 2.5"),
        (lambda: Loop(Step(worker("a")), _true, max_iterations=None), "got None"),
        (lambda: Loop(Step(worker("a")), None), "Loop 'loop': stop must be a function"),
        (lambda: Condition(None, Step(worker("a"))), "predicate must be a function"),
        (lambda: Router("fast", {"fast": Step(worker("a"))}), "selector must be a function"),
        (lambda: Router(_true, [Step(worker("a"))]), "as a mapping of keys to steps, got list"),
        (lambda: Router(_true, None), "as a mapping of keys to steps, got NoneType"),
        # a name that is no text failed the run at its first event (Event.source: a str)
        (lambda: Step(worker("a"), name=5), "a Step's name must be a string, got 5 (int)"),
        (lambda: Parallel(Step(worker("a")), name=None), "a Parallel's name must be a string"),
        (lambda: Loop(Step(worker("a")), _true, name=7), "a Loop's name must be a string"),
    ],
)
def test_wrong_node_arguments_are_configuration_errors(
    build: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        build()


async def test_desk_flow_takes_one_node_and_rejects_none() -> None:
    desk = make_desk(Scripts(a=["only"]))
    report = await desk.flow(Step(worker("a"))).arun(Job(input="go"))  # type: ignore[arg-type]
    assert (report.status, report.content) == ("completed", "only")
    with pytest.raises(ConfigurationError, match="a flow needs at least one step"):
        desk.flow(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [None, 5])
async def test_a_flow_named_with_no_string_is_refused_before_its_run_is_stored(name: Any) -> None:
    desk = make_desk(Scripts())
    flow = desk.flow([Step(worker("a"))], name=name)
    with pytest.raises(ConfigurationError, match=f"a runner's name must be a string, not {name}"):
        await flow.arun(Job(input="go"))
    assert desk.run_store.list_runs() == []  # was: a run stuck "running"


async def test_resuming_with_a_runner_of_another_kind_leaves_the_run_paused() -> None:
    approvals = Approvals()
    desk = make_desk(Scripts(p=asks_approval("t")))
    team = Workforce([worker("p", approvals.tool)], mode="collaborate", name="team")
    paused = await desk.arun(team, Job(input="go"))
    assert paused.status == "paused"

    wrong = desk.flow([Step(worker("p", approvals.tool))], name="team")
    expected = (
        f"run {paused.run_id} was paused by workforce 'team'; the flow 'team' given cannot"
        " resume it (the run stays paused)"
    )
    with pytest.raises(ConfigurationError) as raised:  # was: a failed report, the run paused
        await wrong.aresume(paused, True)
    assert str(raised.value) == expected
    assert desk.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]

    report = await desk.aresume(paused, True, runner=team)
    assert (report.status, approvals.executed) == ("completed", ["t"])


async def test_a_flow_run_or_resume_of_none_says_what_it_expected() -> None:
    desk = make_desk(Scripts())
    flow = desk.flow([Step(worker("a"))], name="f")
    with pytest.raises(ConfigurationError, match="job must be a Job or its input"):
        await flow.arun(None)  # type: ignore[call-overload]  # was: pydantic's text for Job
    with pytest.raises(ConfigurationError, match="paused run's Report or its run id"):
        await flow.aresume(None, True)  # type: ignore[call-overload]  # was: ... for Report
    assert desk.run_store.list_runs() == []


@pytest.mark.parametrize(("returned", "given"), [(None, "None"), ("  ", "a blank string")])
async def test_a_job_builder_returning_no_input_fails_its_step_saying_so(
    returned: Any, given: str
) -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    flow = desk.flow([Step(worker("a"), job_builder=lambda ctx: returned, name="build")])
    report = await flow.arun("go")
    assert report.status == "failed"
    assert report.errors == [  # was: pydantic's ValidationError text for Job
        "step 'build': ConfigurationError: the job_builder's result must be a Job or its input"
        f" (a non-empty string or any other value), not {given}"
    ]
    assert scripts.calls["a"] == 0
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]
