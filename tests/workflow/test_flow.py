"""Flow semantics: every node type, job builders, combined content, events, metrics."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from flowkit import Scripts, make_desk, worker

from deskwork import ConfigurationError, Desk, EventLoopRunningError, Job, Report
from deskwork.store import InMemoryRunStore
from deskwork.testing import Turn, fail
from deskwork.workflow import (
    AsyncCondition,
    AsyncLoop,
    Condition,
    Flow,
    Loop,
    Parallel,
    Router,
    Step,
    WorkflowContext,
)
from gatekit import GatedAdapter


def step_events(report: Report) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.type, e.source, e.payload) for e in report.events if e.type.startswith("step.")]


async def test_single_step_returns_the_step_output_without_headers() -> None:
    desk = make_desk(Scripts(a=["the analysis"]))
    report = await desk.flow([Step(worker("a"))]).arun(Job(input="feedback"))
    assert report.status == "completed"
    assert report.content == "the analysis"
    assert report.run_id and desk.run_store.get_run(report.run_id) is not None


async def test_several_steps_are_combined_under_step_headers() -> None:
    desk = make_desk(Scripts(a=["first"], b=["second"]))
    flow = desk.flow([Step(worker("a")), Step(worker("b"), name="writer")])
    report = await flow.arun("go")
    assert report.content == "## a\n\nfirst\n\n## writer\n\nsecond"
    assert report.data == [
        {"step": "a", "content": "first", "data": None},
        {"step": "writer", "content": "second", "data": None},
    ]
    assert desk.run_store.get_run(report.run_id).output == report.content  # type: ignore[union-attr]


async def test_steps_get_the_flow_job_or_the_job_builder_result() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    seen: list[list[str | None]] = []

    def build(ctx: WorkflowContext) -> Job:
        seen.append([r.content for r in ctx.outputs])
        previous = ctx.output("a")
        return Job(
            input={"task": "write", "seed": ctx.job.input, "from": previous and previous.content}
        )

    async def build_async(ctx: WorkflowContext) -> str:
        return f"review {len(ctx.outputs)}"

    flow = desk.flow(
        [Step(worker("a")), Step(worker("b"), job_builder=build), Step(worker("c"), build_async)]
    )
    report = await flow.arun(Job(input="feedback"))

    assert report.status == "completed"
    assert seen == [["a#1"]]
    user_inputs = [call["messages"][-1]["content"] for call in desk.adapter.calls]  # type: ignore[attr-defined]
    assert user_inputs == [
        "feedback",
        '{"task": "write", "seed": "feedback", "from": "a#1"}',
        "review 2",
    ]


async def test_parallel_returns_all_results_in_branch_order() -> None:
    scripts = Scripts(slow=[Turn(content="slow done", latency=0.05)])
    desk = make_desk(scripts)
    seen: list[list[str | None]] = []

    def after(ctx: WorkflowContext) -> str:
        seen.append([r.content for r in ctx.outputs])
        return "after"

    flow = desk.flow(
        [Parallel(Step(worker("slow")), Step(worker("fast"))), Step(worker("c"), job_builder=after)]
    )
    report = await flow.arun("go")

    assert report.status == "completed"
    assert [d["step"] for d in report.data] == ["slow", "fast", "c"]
    assert seen == [["slow done", "fast#1"]]


async def test_parallel_steps_overlap() -> None:
    scripts = Scripts()
    adapter = GatedAdapter(10, default=scripts)  # run one after another, the calls fail
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    flow = desk.flow([Parallel(*(Step(worker(f"w{i}")) for i in range(10)))])
    report = await flow.arun("go")
    assert report.status == "completed", report.errors
    assert sum(scripts.calls.values()) == 10


@pytest.mark.parametrize(("flag", "expected"), [(True, "yes#1"), (False, "no#1")])
async def test_condition_chooses_a_branch(flag: bool, expected: str) -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    condition = Condition(
        lambda ctx: flag, if_true=[Step(worker("yes"))], if_false=Step(worker("no"))
    )
    report = await desk.flow([condition]).arun("go")
    assert report.content == expected
    assert sum(scripts.calls.values()) == 1


async def test_async_condition_awaits_its_predicate() -> None:
    async def ready(ctx: WorkflowContext) -> bool:
        await asyncio.sleep(0)
        return bool(ctx.outputs)

    desk = make_desk(Scripts())
    flow = desk.flow(
        [Step(worker("a")), AsyncCondition(ready, [Step(worker("yes"))], [Step(worker("no"))])]
    )
    report = await flow.arun("go")
    assert [d["step"] for d in report.data] == ["a", "yes"]


async def test_condition_without_else_branch_runs_nothing() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    flow = desk.flow([Step(worker("a")), Condition(lambda ctx: False, [Step(worker("b"))])])
    report = await flow.arun("go")
    assert report.status == "completed"
    assert report.content == "a#1"
    assert scripts.calls["b"] == 0


async def test_router_runs_the_selected_route() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)

    async def pick(ctx: WorkflowContext) -> str:
        return "deep"

    router = Router(pick, {"fast": [Step(worker("fast"))], "deep": [Step(worker("deep"))]})
    report = await desk.flow([router]).arun("go")
    assert report.content == "deep#1"
    assert scripts.calls["fast"] == 0


async def test_router_with_unknown_route_fails_with_a_clear_error() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    router = Router(lambda ctx: "nope", {"fast": [Step(worker("fast"))]})
    report = await desk.flow([router, Step(worker("later"))]).arun("go")
    assert report.status == "failed"
    assert report.errors == ["Router 'router': unknown route 'nope' (routes: 'fast')"]
    assert scripts.calls["later"] == 0
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]


async def test_loop_stops_on_its_predicate_and_tracks_iterations() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    iterations: list[int] = []

    def stop(ctx: WorkflowContext) -> bool:
        iterations.append(ctx.loop_iteration("edit"))
        return len(ctx.outputs) >= 3

    loop = Loop([Step(worker("editor"))], stop=stop, max_iterations=5, name="edit")
    report = await desk.flow([loop]).arun("go")
    assert report.status == "completed"
    assert iterations == [1, 2, 3]
    assert scripts.calls["editor"] == 3
    assert report.content is not None and "## editor\n\neditor#3" in report.content


async def test_loop_stops_at_max_iterations() -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    loop = Loop([Step(worker("a")), Step(worker("b"))], stop=lambda ctx: False, max_iterations=2)
    report = await desk.flow([loop]).arun("go")
    assert [d["step"] for d in report.data] == ["a", "b", "a", "b"]


async def test_async_loop_awaits_its_stop_predicate() -> None:
    async def done(ctx: WorkflowContext) -> bool:
        return ctx.loop_iteration("poll") >= 2

    scripts = Scripts()
    desk = make_desk(scripts)
    report = await desk.flow([AsyncLoop([Step(worker("poller"))], done, name="poll")]).arun("go")
    assert report.status == "completed"
    assert scripts.calls["poller"] == 2


def _failing(name: str) -> Scripts:
    scripts = Scripts()
    scripts.scripts[name] = [fail(RuntimeError("model down"))]
    return scripts


@pytest.mark.parametrize(
    "build",
    [
        lambda: [Step(worker("bad")), Step(worker("after"))],
        lambda: [Condition(lambda ctx: True, [Step(worker("bad")), Step(worker("after"))])],
        lambda: [Router(lambda ctx: "r", {"r": [Step(worker("bad"))]}), Step(worker("after"))],
        lambda: [Loop([Step(worker("bad")), Step(worker("after"))], stop=lambda ctx: False)],
        lambda: [Parallel(Step(worker("bad")), Step(worker("side"))), Step(worker("after"))],
    ],
    ids=["sequence", "condition", "router", "loop", "parallel"],
)
async def test_a_failed_step_stops_the_flow(build: Any) -> None:
    scripts = _failing("bad")
    desk = make_desk(scripts)
    report = await desk.flow(build()).arun("go")
    assert report.status == "failed"
    assert len(report.errors) == 1 and report.errors[0].startswith("step 'bad': ")
    assert "model down" in report.errors[0]
    assert scripts.calls["bad"] == 1
    assert scripts.calls["after"] == 0
    assert ("step.completed", "bad", {"status": "failed"}) in step_events(report)


async def test_a_raising_predicate_or_job_builder_fails_the_flow_with_its_name() -> None:
    def boom(ctx: WorkflowContext) -> bool:
        raise ValueError("no idea")

    desk = make_desk(Scripts())
    report = await desk.flow([Condition(boom, [Step(worker("a"))], name="gate")]).arun("go")
    assert report.errors == ["Condition 'gate': ValueError: no idea"]

    report = await desk.flow([Step(worker("a"), job_builder=boom)]).arun("go")
    assert report.status == "failed"
    assert report.errors == ["step 'a': ValueError: no idea"]


async def test_step_events_name_the_step_and_carry_the_status() -> None:
    desk = make_desk(Scripts())
    seen: list[str] = []
    desk.event_bus.subscribe("step.completed", lambda e: seen.append(e.source))
    report = await desk.flow([Step(worker("a")), Step(worker("b"), name="second")]).arun("go")
    assert step_events(report) == [
        ("step.started", "a", {}),
        ("step.completed", "a", {"status": "completed"}),
        ("step.started", "second", {}),
        ("step.completed", "second", {"status": "completed"}),
    ]
    assert seen == ["a", "second"]
    worker_events = [e.type for e in report.events if e.type.startswith("worker.")]
    assert worker_events.count("worker.completed") == 2  # the steps ran inside the flow's run


async def test_flow_metrics_total_the_steps_metrics() -> None:
    desk = make_desk(Scripts())
    flow = desk.flow([Step(worker("a")), Parallel(Step(worker("b")), Step(worker("c")))])
    report = await flow.arun("go")
    assert report.metrics["llm_calls"] == 3
    assert report.metrics["iterations"] == 3
    assert report.metrics["steps"] == 3
    assert report.metrics["total_tokens"] == 3 * 11  # scripted usage: 10 prompt + 1 word


async def test_desk_runs_a_flow_and_a_flow_can_be_a_step() -> None:
    desk = make_desk(Scripts())
    inner = Flow(desk, [Step(worker("a")), Step(worker("b"))], name="inner")
    outer = desk.flow([Step(inner), Step(worker("c"))], name="outer")
    report = await desk.arun(outer, Job(input="go"))
    assert report.status == "completed"
    assert report.content is not None
    assert report.content.startswith("## inner\n\n## a\n\na#1")
    assert desk.get_runner("flow", "outer") is outer


def test_sync_run_outside_a_loop() -> None:
    desk = make_desk(Scripts())
    report = desk.flow([Step(worker("a"))]).run(Job(input="go"))
    assert report.content == "a#1"


async def test_sync_wrappers_raise_inside_a_running_loop() -> None:
    scripts = Scripts()
    flow = make_desk(scripts).flow([Step(worker("a"))])
    with pytest.raises(EventLoopRunningError, match="arun"):
        flow.run("go")
    with pytest.raises(EventLoopRunningError, match="aresume"):
        flow.resume("some-run", True)
    assert scripts.calls["a"] == 0


def test_invalid_flows_are_rejected_when_built() -> None:
    desk = make_desk(Scripts())
    with pytest.raises(ConfigurationError, match="at least one step"):
        desk.flow([])
    with pytest.raises(ConfigurationError, match="wrap runners in Step"):
        desk.flow([worker("a")])
    with pytest.raises(ConfigurationError, match="at least one step"):
        Parallel()
    with pytest.raises(ConfigurationError, match="max_iterations"):
        Loop([Step(worker("a"))], stop=lambda ctx: True, max_iterations=0)


async def test_the_documented_forms_work() -> None:
    desk = make_desk(Scripts())
    worker_a, worker_b = worker("a"), worker("b")
    seen_desks: list[object] = []

    def build_job(context: WorkflowContext) -> Job:
        seen_desks.append(context.desk)
        return Job(input={"task": "Analyze", "seed": context.job.input})

    def stop_when_done(ctx: WorkflowContext) -> bool:
        return ctx.loop_iteration("analysis_loop") >= 3 or len(ctx.outputs) > 4

    flow = desk.flow(
        [
            Step(worker_a, job_builder=build_job),
            Parallel(Step(worker_a), Step(worker_b)),
            Condition(
                predicate=lambda ctx: bool(ctx.outputs),
                if_true=[Step(worker_a)],
                if_false=[Step(worker_b)],
            ),
            Router(
                selector=lambda ctx: "fast",
                routes={"fast": [Step(worker_a)], "deep": [Step(worker_b)]},
            ),
            Loop(
                steps=[Step(worker_b)], stop=stop_when_done, max_iterations=5, name="analysis_loop"
            ),
        ]
    )
    report = await flow.arun(Job(input="Analyze feedback"))
    assert report.status == "completed"
    assert [d["step"] for d in report.data] == ["a", "a", "b", "a", "a", "b"]
    assert seen_desks == [desk]
