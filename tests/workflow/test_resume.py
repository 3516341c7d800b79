"""Pause and resume: at every node type, in a new process, without repeating work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flowkit import Approvals, Scripts, asks_approval, make_desk, worker

from deskwork import ConfigurationError, Desk, Job, Report, Workforce
from deskwork.testing import fail
from deskwork.workflow import (
    Condition,
    Flow,
    Loop,
    Node,
    Parallel,
    Router,
    Step,
    WorkflowContext,
)


def paused_steps(report: Report) -> list[str]:
    return [e.source for e in report.events if e.type == "step.paused"]


async def test_pause_in_a_sequence_resumes_at_the_paused_step() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval("post"))
    desk = make_desk(scripts)
    flow = desk.flow([Step(worker("a")), Step(worker("approver", tool.tool)), Step(worker("b"))])

    report = await flow.arun("go")
    assert report.status == "paused"
    assert report.pending_action is not None and report.pending_action.type == "confirmation"
    assert paused_steps(report) == ["approver"]
    assert scripts.calls["b"] == 0 and tool.executed == []
    assert report.metrics["llm_calls"] == 2  # a, plus the approver's first turn

    report = await desk.aresume(report, True)  # the desk finds the registered flow
    assert report.status == "completed", report.errors
    assert tool.executed == ["post"]
    assert dict(scripts.calls) == {"a": 1, "approver": 2, "b": 1}
    assert [d["step"] for d in report.data] == ["a", "approver", "b"]
    assert report.data[1]["content"] == "done post"
    assert report.metrics["llm_calls"] == 4
    assert report.metrics["steps"] == 3


async def test_a_declined_confirmation_lets_the_step_finish_without_the_tool() -> None:
    tool = Approvals()
    desk = make_desk(Scripts(approver=asks_approval()))
    flow = desk.flow([Step(worker("approver", tool.tool))])
    report = await flow.aresume(await flow.arun("go"), False)
    assert report.status == "completed"
    assert tool.executed == []


async def test_condition_resumes_the_branch_it_chose() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval())
    desk = make_desk(scripts)
    answers = iter([True, False])
    chosen: list[bool] = []

    def predicate(ctx: WorkflowContext) -> bool:
        chosen.append(next(answers))
        return chosen[-1]

    condition = Condition(
        predicate,
        if_true=[Step(worker("approver", tool.tool)), Step(worker("after"))],
        if_false=[Step(worker("other"))],
    )
    flow = desk.flow([condition, Step(worker("last"))])
    report = await flow.aresume(await flow.arun("go"), True)
    assert report.status == "completed", report.errors
    assert chosen == [True]
    assert [d["step"] for d in report.data] == ["approver", "after", "last"]
    assert scripts.calls["other"] == 0


async def test_router_resumes_the_route_it_chose() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval())
    desk = make_desk(scripts)
    picks: list[str] = []

    def select(ctx: WorkflowContext) -> str:
        picks.append("deep" if not picks else "fast")
        return picks[-1]

    router = Router(
        select, {"fast": [Step(worker("fast"))], "deep": [Step(worker("approver", tool.tool))]}
    )
    flow = desk.flow([router])
    report = await flow.aresume(await flow.arun("go"), True)
    assert report.status == "completed"
    assert picks == ["deep"]
    assert report.content == "done x"
    assert scripts.calls["fast"] == 0


async def test_loop_resumes_inside_the_paused_iteration() -> None:
    tool = Approvals()
    # The approver answers directly in iteration 1 and asks for approval in iteration 2.
    scripts = Scripts(approver=["fine", *asks_approval("second")])
    desk = make_desk(scripts)
    stops: list[int] = []

    def stop(ctx: WorkflowContext) -> bool:
        stops.append(ctx.loop_iteration("review"))
        return ctx.loop_iteration("review") >= 3

    loop = Loop(
        [Step(worker("a")), Step(worker("approver", tool.tool))],
        stop=stop,
        max_iterations=5,
        name="review",
    )
    flow = desk.flow([loop])
    report = await flow.arun("go")
    assert report.status == "paused"
    assert stops == [1]

    report = await flow.aresume(report, True)
    assert report.status == "completed", report.errors
    assert stops == [1, 2, 3]
    assert scripts.calls["a"] == 3
    assert tool.executed == ["second"]
    contents = [d["content"] for d in report.data]
    assert contents == ["a#1", "fine", "a#2", "done second", "a#3", "approver#4"]


async def test_parallel_keeps_finished_branches_and_resumes_the_paused_one() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval())
    desk = make_desk(scripts)
    parallel = Parallel(Step(worker("a")), Step(worker("approver", tool.tool)), Step(worker("b")))
    flow = desk.flow([parallel, Step(worker("after"))])

    report = await flow.arun("go")
    assert report.status == "paused"
    assert scripts.calls["after"] == 0
    report = await flow.aresume(report, True)
    assert report.status == "completed", report.errors
    assert dict(scripts.calls) == {"a": 1, "approver": 2, "b": 1, "after": 1}
    assert [d["step"] for d in report.data] == ["a", "approver", "b", "after"]
    assert report.metrics["llm_calls"] == 5


async def test_parallel_with_two_paused_branches_needs_two_decisions() -> None:
    tool = Approvals()
    scripts = Scripts(one=asks_approval("one"), two=asks_approval("two"))
    desk = make_desk(scripts)
    flow = desk.flow([Parallel(Step(worker("one", tool.tool)), Step(worker("two", tool.tool)))])

    report = await flow.arun("go")
    assert paused_steps(report) == ["one", "two"]
    assert report.pending_action is not None
    assert report.pending_action.tool_call.arguments == {"text": "one"}

    report = await flow.aresume(report, True)
    assert report.status == "paused"
    assert report.pending_action is not None
    assert report.pending_action.tool_call.arguments == {"text": "two"}
    assert tool.executed == ["one"]

    report = await flow.aresume(report, "yes")
    assert report.status == "completed"
    assert tool.executed == ["one", "two"]
    assert dict(scripts.calls) == {"one": 2, "two": 2}
    assert report.content == "## one\n\ndone one\n\n## two\n\ndone two"


async def test_a_failed_branch_wins_over_a_paused_one() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval(), bad=[fail(RuntimeError("down"))])
    desk = make_desk(scripts)
    flow = desk.flow([Parallel(Step(worker("approver", tool.tool)), Step(worker("bad")))])
    report = await flow.arun("go")
    assert report.status == "failed"
    assert "down" in report.errors[0]


async def test_a_nested_flow_pauses_and_resumes_inside_its_parent() -> None:
    tool = Approvals()
    scripts = Scripts(approver=asks_approval())
    desk = make_desk(scripts)
    inner = Flow(desk, [Step(worker("a")), Step(worker("approver", tool.tool))], name="inner")
    outer = desk.flow([Step(inner), Step(worker("b"))], name="outer")
    report = await outer.aresume(await outer.arun("go"), True)
    assert report.status == "completed", report.errors
    assert dict(scripts.calls) == {"a": 1, "approver": 2, "b": 1}


async def test_same_process_resume_keeps_the_step_job_objects() -> None:
    tool = Approvals()
    desk = make_desk(Scripts(approver=asks_approval()))

    def with_tool(ctx: WorkflowContext) -> Job:
        return Job(input="go", tools_override=[tool.tool])  # a Tool object: not JSON

    flow = desk.flow([Step(worker("approver"), job_builder=with_tool)])
    report = await flow.aresume(await flow.arun("go"), True)
    assert report.status == "completed", report.errors
    assert tool.executed == ["x"]


def build_flow(desk: Desk, tool: Approvals, log: list[str]) -> Flow:
    def predicate(ctx: WorkflowContext) -> bool:
        log.append("predicate")
        return True

    def stop(ctx: WorkflowContext) -> bool:
        return ctx.loop_iteration("rounds") >= 2

    loop = Loop(
        [Step(worker("r")), Step(worker("approver", tool.tool))],
        stop,
        max_iterations=3,
        name="rounds",
    )
    return desk.flow(
        [
            Step(worker("first")),
            Condition(predicate, [Parallel(Step(worker("side")), loop)], [Step(worker("never"))]),
            Step(worker("last")),
        ],
        name="durable",
    )


async def test_resume_in_a_new_process_continues_at_the_paused_step(tmp_path: Path) -> None:
    tool1, log1 = Approvals(), list[str]()
    scripts1 = Scripts(approver=["ok", *asks_approval("round2")])
    desk1 = make_desk(scripts1, storage_dir=tmp_path)
    report = await build_flow(desk1, tool1, log1).arun(Job(input="topic"))
    assert report.status == "paused"
    run_id = report.run_id
    assert dict(scripts1.calls) == {"first": 1, "side": 1, "r": 2, "approver": 2}

    tool2, log2 = Approvals(), list[str]()
    scripts2 = Scripts(approver=["done round2"])
    desk2 = make_desk(scripts2, storage_dir=tmp_path)  # new desk, new flow, same storage
    report = await build_flow(desk2, tool2, log2).aresume(run_id, True)

    assert report.status == "completed", report.errors
    assert tool1.executed == [] and tool2.executed == ["round2"]
    assert log1 == ["predicate"] and log2 == []
    assert dict(scripts2.calls) == {"approver": 1, "last": 1}
    steps = [(d["step"], d["content"]) for d in report.data]
    assert steps == [
        ("first", "first#1"),
        ("side", "side#1"),
        ("r", "r#1"),
        ("approver", "ok"),
        ("r", "r#2"),
        ("approver", "done round2"),
        ("last", "last#1"),
    ]
    record = desk2.run_store.get_run(run_id)
    assert record is not None and record.status == "completed"
    types = [e.type for e in desk2.run_store.get_events(run_id)]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert types.count("run.paused") == 1 and types.count("run.resumed") == 1


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(["approver", "new"], id="a step added"),
        pytest.param(["renamed"], id="the paused step renamed"),
        pytest.param(["new", "approver"], id="a step moved before the paused one"),
    ],
)
async def test_resume_with_a_changed_flow_is_refused_and_the_run_stays_paused(
    tmp_path: Path, steps: list[str]
) -> None:
    tool = Approvals()
    desk1 = make_desk(Scripts(approver=asks_approval()), storage_dir=tmp_path)
    paused = await desk1.flow([Step(worker("approver", tool.tool))], name="f").arun("go")

    desk2 = make_desk(Scripts(approver=["done"]), storage_dir=tmp_path)
    changed = desk2.flow([Step(worker(name, tool.tool)) for name in steps], name="f")
    with pytest.raises(ConfigurationError) as raised:  # was: the run failed for good
        await changed.aresume(paused.run_id, True)
    assert str(raised.value) == (
        f"flow 'f' changed since run {paused.run_id} paused (its steps differ): resume it"
        " with the flow as it was when it paused; the run stays paused"
    )
    record = desk2.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"
    assert tool.executed == []

    original = desk2.flow([Step(worker("approver", tool.tool))], name="f")
    report = await original.aresume(paused.run_id, True)
    assert (report.status, tool.executed) == ("completed", ["x"])


def _nested(desk: Desk, tool: Approvals, inner_steps: list[str], team: list[str]) -> Flow:
    """outer: [Parallel(b, inner flow: [<inner_steps>, Workforce team]), c]; the
    workforce's approver pauses inside a nested flow in the second branch."""
    members = [worker(name, tool.tool) for name in team]
    crew = Workforce(members, mode="swarm", name="crew")
    inner = Flow(desk, [*(Step(worker(n)) for n in inner_steps), Step(crew)], name="inner")
    return desk.flow([Parallel(Step(worker("b")), Step(inner)), Step(worker("c"))], name="outer")


@pytest.mark.parametrize(
    ("inner_steps", "team", "refusal"),
    [
        pytest.param(["a", "x"], ["approver"], "flow 'inner' changed", id="nested flow changed"),
        pytest.param(
            ["a"], ["other"], "worker 'approver' is not a member", id="a step's workforce changed"
        ),
    ],
)
async def test_a_change_inside_a_paused_step_is_refused_and_the_run_stays_paused(
    inner_steps: list[str], team: list[str], refusal: str
) -> None:
    tool = Approvals()
    desk = make_desk(Scripts(approver=asks_approval()))
    paused = await _nested(desk, tool, ["a"], ["approver"]).arun("go")
    assert paused.status == "paused"

    changed = _nested(desk, tool, inner_steps, team)
    with pytest.raises(ConfigurationError, match=refusal) as raised:  # was: failed for good
        await changed.aresume(paused, True)
    assert str(raised.value).startswith("flow 'outer', Step 'inner': ")
    assert desk.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]

    report = await _nested(desk, tool, ["a"], ["approver"]).aresume(paused, True)
    assert (report.status, tool.executed) == ("completed", ["x"])


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param({"index": 1}, id="incomplete"),
        pytest.param({"index": 5, "child": None}, id="past the last step (ended 'completed')"),
        pytest.param(None, id="none (ran the flow again from its first step)"),
        pytest.param({"index": 0, "child": {"state": {}}}, id="a step that did not pause"),
    ],
)
async def test_a_damaged_stored_cursor_fails_the_resumed_run(cursor: object) -> None:
    tool = Approvals()
    desk = make_desk(Scripts(a=["a#1"], approver=asks_approval()))
    flow = desk.flow([Step(worker("a")), Step(worker("approver", tool.tool))], name="f")
    paused = await flow.arun("go")
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    payload = {**record.state.payload, "cursor": cursor}  # no workflow could continue it
    state = record.state.model_copy(update={"payload": payload})
    desk.run_store.update_run(paused.run_id, "paused", None, None, state)

    report = await flow.aresume(paused, True)  # check_resume does not raise a KeyError
    assert report.status == "failed" and tool.executed == []
    assert report.errors == [
        f"flow 'f': the stored position of run {paused.run_id} names no paused step (the"
        " stored state is damaged); it cannot be resumed"
    ]


async def test_a_finished_flow_cannot_be_resumed() -> None:
    desk = make_desk(Scripts())
    flow = desk.flow([Step(worker("a"))])
    done = await flow.arun("go")
    report = await flow.aresume(done, True)
    assert report.status == "failed"
    assert "not paused" in report.errors[0]


def test_sync_run_and_resume() -> None:
    tool = Approvals()
    desk = make_desk(Scripts(approver=asks_approval()))
    flow = desk.flow([Step(worker("approver", tool.tool))])
    report = flow.run(Job(input="go"))
    assert report.status == "paused"
    report = flow.resume(report, True)
    assert report.status == "completed"
    assert tool.executed == ["x"]


class _Audited(Node):
    """A node of the user's own: runs its inner node, passing the cursor through."""

    def __init__(self, inner: Node) -> None:
        super().__init__("audited")
        self.inner = inner

    async def execute(self, run: Any, cursor: Any) -> Any:
        return await run.node(self.inner, cursor)

    def shape(self) -> Any:
        return ["Audited", self.inner.shape()]


async def test_a_node_of_the_users_own_pauses_and_resumes(tmp_path: Path) -> None:
    tool = Approvals()
    desk1 = make_desk(Scripts(approver=asks_approval("post")), storage_dir=tmp_path)
    steps = [Step(worker("a")), _Audited(Step(worker("approver", tool.tool)))]
    paused = await desk1.flow(steps, name="f").arun("go")  # was: IndexError at the pause
    assert paused.status == "paused", paused.errors

    desk2 = make_desk(Scripts(approver=["done"]), storage_dir=tmp_path)
    again = [Step(worker("a")), _Audited(Step(worker("approver", tool.tool)))]
    report = await desk2.flow(again, name="f").aresume(paused.run_id, True)
    assert report.status == "completed", report.errors
    assert tool.executed == ["post"]
