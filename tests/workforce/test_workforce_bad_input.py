"""Workforce misuse: wrong member and limit types, reducers that return the wrong thing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from wfkit import Model, make_desk, worker

from deskwork import ConfigurationError, Job, Report, Worker, Workforce
from deskwork.architecture.blackboard import BlackboardArchitecture


@pytest.mark.parametrize("returned", [None, "a text", {"content": "x"}])
async def test_a_reducer_returning_no_report_fails_the_run_saying_so(returned: Any) -> None:
    wf = Workforce([worker("a"), worker("b")], mode="collaborate", reducer=lambda _: returned)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert report.errors == [f"reducer returned {type(returned).__name__}, not a Report"]
    assert report.metrics["llm_calls"] == 2


async def test_a_reducer_returning_a_paused_report_fails_the_run_instead_of_pausing_it() -> None:
    """A paused report from a reducer has no pending action and no member to resume: the run
    was stored paused, with nothing a person could answer."""
    done = Report(run_id="r", status="paused", content="half")
    wf = Workforce([worker("a"), worker("b")], mode="collaborate", reducer=lambda _: done)
    desk = make_desk(Model())
    report = await desk.arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert report.errors == ["reducer returned a 'paused' report; it must be completed or failed"]
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]
    assert [e.payload for e in report.events if e.type == "workforce.completed"] == [
        {"status": "failed"}
    ]


async def test_a_reducer_error_is_redacted_in_the_report() -> None:
    def leaky(reports: list[Report]) -> Report:
        raise RuntimeError("cannot reach postgresql://app:hunter2@db/x")

    wf = Workforce([worker("a")], mode="collaborate", reducer=leaky)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert "hunter2" not in report.errors[0]
    assert report.errors[0].startswith("reducer failed: RuntimeError: cannot reach postgresql://")


@pytest.mark.parametrize("name", ["", "  ", 5, None])
def test_a_worker_needs_a_non_blank_string_name(name: Any) -> None:
    """A blank-named member was "found" by a manager's name scan in any reply and selected;
    one named 5 failed its workforce's run with a raw TypeError after the manager's call."""
    with pytest.raises(ConfigurationError, match="a Worker's name must be a non-empty string"):
        Worker(name=name)


@pytest.mark.parametrize(
    ("workers", "options", "message"),
    [
        (None, {}, "takes a list of workers, got NoneType"),
        (worker("a"), {}, "takes a list of workers, got Worker"),
        ({"a": worker("a")}, {}, "takes a list of workers, got dict"),
        (["a", "b"], {}, "a member must be a Worker, got str"),
        ([worker("a"), None], {}, "a member must be a Worker, got NoneType"),
        ([worker("a")], {"manager": "a"}, "manager must be a Worker, got str"),
        ([worker("a")], {"coordinator": "a"}, "coordinator must be a Worker"),
        ([worker("a")], {"max_handoffs": "3"}, "max_handoffs must be an integer >= 0, got '3'"),
        ([worker("a")], {"max_rounds": None}, "max_rounds must be an integer >= 0, got None"),
        ([worker("a")], {"max_rounds": 1.5}, "max_rounds must be an integer >= 0, got 1.5"),
        ([worker("a")], {"max_handoffs": True}, "max_handoffs must be an integer >= 0"),
    ],
)
def test_wrong_members_and_limits_are_configuration_errors(
    workers: Any, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        Workforce(workers, **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"agents": [worker("a")]}, "agents as a mapping of names to workers, got list"),
        ({"agents": {"a": "a worker"}}, "agent 'a' must be a Worker, got str"),
        ({"agents": {1: worker("a")}}, "agent names must be non-empty strings, got 1"),
        ({"agents": {" ": worker("a")}}, "agent names must be non-empty strings, got ' '"),
        ({"agents": {"a": worker("a")}, "decider": "d"}, "decider must be a Worker, got str"),
        ({"agents": {"a": worker("a")}, "max_rounds": "2"}, "max_rounds must be an integer >= 0"),
        ({"agents": {"a": worker("a")}, "max_rounds": 2.5}, "got 2.5"),
    ],
)
def test_blackboard_architecture_rejects_wrong_agents_and_limits(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        BlackboardArchitecture(**options)


async def test_a_blackboard_workforce_with_max_rounds_zero_still_runs() -> None:
    wf = Workforce([worker("a")], mode="blackboard", max_rounds=0)
    report = await make_desk(Model()).arun(wf, Job(input="go"))
    assert report.status == "failed"
    assert report.errors == ["no contribution on the blackboard to answer from"]


def test_a_workforce_named_with_no_string_leaves_no_run_stuck_running() -> None:
    desk = make_desk(Model())
    with pytest.raises(ConfigurationError, match="a runner's name must be a string, not None"):
        desk.run(Workforce([worker("a")], name=None), "go")  # type: ignore[arg-type]
    assert desk.run_store.list_runs() == []
