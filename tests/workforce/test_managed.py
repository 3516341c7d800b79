"""Managed mode: selection rules and fallbacks, tools disabled, pause/resume at both stages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from wfkit import (
    Model,
    assert_metrics_match_llm_events,
    deploy,
    lookup,
    make_desk,
    of_type,
    types,
    worker,
)

from deskwork import Job, Report, RunState, Worker, Workforce
from deskwork.exceptions import ConfigurationError
from deskwork.runtime import RunConfig
from deskwork.testing import Turn, call_tool, structured
from deskwork.tools import tool


def team(*extra: Worker, manager: Worker | None = None, name: str = "team") -> Workforce:
    return Workforce([worker("researcher"), worker("writer"), *extra], manager=manager, name=name)


async def test_structured_worker_field_selects_the_worker_and_manager_tools_are_disabled() -> None:
    model = Model(boss=[structured({"worker": "writer"})], writer=["the article"])
    desk = make_desk(model)
    report = await desk.arun(team(manager=worker("boss", lookup)), Job(input="Write about AI"))

    assert report.status == "completed" and report.content == "the article"
    assert model.order() == ["boss", "writer"]
    _, boss_messages, boss_tools = model.seen[0]
    assert boss_tools is None  # the manager has a tool, but selection runs without tools
    prompt = boss_messages[-1]["content"]
    assert "- researcher: researcher" in prompt and "Task:\nWrite about AI" in prompt
    schema = desk.adapter.calls[0]["response_format"]["json_schema"]["schema"]  # type: ignore[attr-defined]
    assert list(schema["properties"]) == ["worker"]
    assert schema["properties"]["worker"]["enum"] == ["researcher", "writer"]
    assert not of_type(report, "workforce.warning")
    assert_metrics_match_llm_events(report)
    assert report.metrics["llm_calls"] == 2


async def test_events_of_a_managed_run_are_in_order_in_the_store() -> None:
    model = Model(boss=[structured({"worker": "writer"})])
    desk = make_desk(model)
    report = await desk.arun(team(manager=worker("boss")), Job(input="go"))
    stored = desk.run_store.get_events(report.run_id)
    flow = [(e.type, e.source) for e in stored if not e.type.startswith(("llm.", "assistant."))]
    assert flow == [
        ("run.started", "team"),
        ("workforce.started", "team"),
        ("worker.started", "boss"),
        ("worker.completed", "boss"),
        ("worker.started", "writer"),
        ("worker.completed", "writer"),
        ("workforce.completed", "team"),
        ("run.completed", "team"),
    ]
    assert [e.event_id for e in stored] == [e.event_id for e in report.events]
    assert stored[1].payload == {"mode": "managed"}


async def test_name_in_the_output_is_the_second_rule() -> None:
    model = Model(boss=[structured({"worker": "Probably the WRITER, honestly"})])
    report = await make_desk(model).arun(team(manager=worker("boss")), Job(input="go"))
    assert model.order() == ["boss", "writer"]
    (warning,) = of_type(report, "workforce.warning")
    assert warning.source == "team"
    assert warning.payload["reason"] == "manager_selection_name_scan"
    assert warning.payload["selected"] == "writer"


async def test_name_scan_takes_the_earliest_name_and_the_longest_at_a_tie() -> None:
    members = [worker("data"), worker("data-team"), worker("ops")]
    model = Model(boss=[structured({"worker": "ops or the data-team, data maybe"})])
    wf = Workforce(members, manager=worker("boss"))
    await make_desk(model).arun(wf, Job(input="go"))
    assert model.order() == ["boss", "ops"]

    model = Model(boss=[structured({"worker": "the data-team, not ops"})])
    await make_desk(model).arun(Workforce(members, manager=worker("boss")), Job(input="go"))
    assert model.order() == ["boss", "data-team"]


async def test_no_matching_name_falls_back_to_the_first_worker() -> None:
    model = Model(boss=[structured({"worker": "nobody in particular"})])
    report = await make_desk(model).arun(team(manager=worker("boss")), Job(input="go"))
    assert model.order() == ["boss", "researcher"]
    assert report.content == "researcher done"
    (warning,) = of_type(report, "workforce.warning")
    assert warning.payload["reason"] == "manager_selection_first_worker"
    assert warning.payload["manager_status"] == "completed"


async def test_a_failed_manager_falls_back_to_the_first_worker() -> None:
    model = Model(boss=["not json"] * 4)  # every structured-output attempt fails validation
    report = await make_desk(model).arun(team(manager=worker("boss")), Job(input="go"))
    assert report.status == "completed"
    assert model.order() == ["boss"] * 4 + ["researcher"]
    (warning,) = of_type(report, "workforce.warning")
    assert warning.payload["manager_status"] == "failed"
    assert "structured output" in warning.payload["manager_errors"][0]


async def test_the_first_worker_is_the_manager_by_default() -> None:
    model = Model(researcher=[structured({"worker": "writer"})])
    wf = team()
    assert wf.manager.name == "researcher"
    report = await make_desk(model).arun(wf, Job(input="go"))
    assert model.order() == ["researcher", "writer"] and report.content == "writer done"


async def test_selected_worker_pause_resumes_that_worker() -> None:
    model = Model(
        boss=[structured({"worker": "writer"})],
        writer=[call_tool("deploy", target="prod"), "shipped"],
    )
    desk = make_desk(model)
    wf = Workforce([worker("researcher"), worker("writer", deploy)], manager=worker("boss"))
    paused = await desk.arun(wf, Job(input="ship it"))

    assert paused.status == "paused" and paused.pending_action is not None
    assert paused.pending_action.type == "confirmation"
    state = _stored_state(desk, paused)
    assert state.payload["stage"] == "worker" and state.payload["worker"] == "writer"
    assert not of_type(paused, "workforce.completed")

    done = await desk.aresume(paused, True)
    assert done.status == "completed" and done.content == "shipped"
    assert model.order() == ["boss", "writer", "writer"]
    assert types(done.events, "workforce.") == [
        "workforce.started", "workforce.started", "workforce.completed",
    ]  # fmt: skip
    assert_metrics_match_llm_events(done)
    assert done.metrics["llm_calls"] == 3 and done.metrics["tool_calls"] == 1


async def test_worker_stage_resumes_in_a_new_process(tmp_path: Path) -> None:
    model = Model(boss=[structured({"worker": "writer"})], writer=[call_tool("deploy", target="x")])
    members = [worker("researcher"), worker("writer", deploy)]
    first = make_desk(model, tmp_path)
    paused = await first.arun(Workforce(members, manager=worker("boss")), Job(input="go"))
    assert paused.status == "paused"

    model2 = Model(writer=["deployed it"])
    desk2 = make_desk(model2, tmp_path)
    members2 = [worker("researcher"), worker("writer", deploy)]
    done = await desk2.aresume(
        paused.run_id, True, runner=Workforce(members2, manager=worker("boss"))
    )

    assert done.status == "completed" and done.content == "deployed it"
    assert model2.order() == ["writer"]  # the manager is not asked again
    assert done.metrics["llm_calls"] == 3  # manager + writer before the pause + writer after
    assert_metrics_match_llm_events(done)
    record = desk2.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "completed"


async def test_resume_without_the_selected_worker_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    model = Model(boss=[structured({"worker": "writer"})], writer=[call_tool("deploy", target="x")])
    first = make_desk(model, tmp_path)
    members = [worker("researcher"), worker("writer", deploy)]
    paused = await first.arun(Workforce(members, manager=worker("boss")), Job(input="go"))

    desk2 = make_desk(Model(writer=["deployed it"]), tmp_path)
    without_writer = Workforce([worker("researcher")], manager=worker("boss"))
    with pytest.raises(ConfigurationError, match="paused worker 'writer' is not in workforce"):
        await desk2.aresume(paused.run_id, True, runner=without_writer)
    original = Workforce(members, manager=worker("boss"))
    await _assert_resumable(desk2, paused, original, "deployed it")


async def test_resume_with_another_manager_is_refused_and_the_run_stays_paused() -> None:
    desk = make_desk(Model(boss=_boss_script(), writer=["written"]))
    paused = await desk.arun(team(manager=_tool_boss("boss")), Job(input="go"))
    assert paused.status == "paused"

    with pytest.raises(ConfigurationError, match="paused manager 'boss' is not this workforce"):
        await desk.aresume(paused, "the writer", runner=team(manager=_tool_boss("chief")))
    await _assert_resumable(desk, paused, team(manager=_tool_boss("boss")), "written", "the writer")


async def test_resume_with_a_workforce_of_another_mode_is_refused_and_the_run_stays_paused() -> (
    None
):
    model = Model(boss=[structured({"worker": "writer"})], writer=[call_tool("deploy", target="x")])
    desk = make_desk(model)
    members = [worker("researcher"), worker("writer", deploy)]
    paused = await desk.arun(Workforce(members, manager=worker("boss")), Job(input="go"))
    other = Workforce(members, mode="collaborate")
    with pytest.raises(ConfigurationError, match="paused by a 'managed' workforce"):
        await desk.aresume(paused, True, runner=other)
    original = Workforce(members, manager=worker("boss"))
    await _assert_resumable(desk, paused, original, "writer done")


async def test_a_paused_run_whose_stored_member_is_lost_fails_instead_of_staying_stuck() -> None:
    model = Model(boss=[structured({"worker": "writer"})], writer=[call_tool("deploy", target="x")])
    desk = make_desk(model)
    members = [worker("researcher"), worker("writer", deploy)]
    paused = await desk.arun(Workforce(members, manager=worker("boss")), Job(input="go"))
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    payload = {**record.state.payload, "worker": None}  # no workforce could continue this
    state = record.state.model_copy(update={"payload": payload})
    desk.run_store.update_run(paused.run_id, "paused", None, None, state)

    failed = await desk.aresume(paused, True, runner=Workforce(members, manager=worker("boss")))
    assert failed.status == "failed" and "state is incomplete" in failed.errors[0]


async def _assert_resumable(
    desk: Any, paused: Report, original: Workforce, content: str, decision: Any = True
) -> None:
    """The refused run is still paused, and the workforce it paused in completes it."""
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"
    done = await desk.aresume(paused.run_id, decision, runner=original)
    assert done.status == "completed" and done.content == content


@tool(requires_user_input=True)
def ask(question: str, user_input: str) -> str:
    """Ask a person."""
    return f"the person said: {user_input}"


class ToolUsingManager(Worker):
    """A manager that keeps its tools (ignores the workforce's ``tools_override=[]``)."""

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        return await super().arun(config, job.model_copy(update={"tools_override": None}))

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        job = job.model_copy(update={"tools_override": None}) if job is not None else None
        return await super().aresume(config, state, decision, job)


def _boss_script() -> list[Turn | str]:
    return [call_tool("ask", question="who?"), "let me decide", structured({"worker": "writer"})]


async def test_manager_stage_pause_resumes_the_manager_then_runs_the_worker(
    tmp_path: Path,
) -> None:
    first = make_desk(Model(boss=_boss_script()), tmp_path)
    boss = ToolUsingManager(name="boss", instructions="boss", tools=[ask])
    paused = await first.arun(team(manager=boss), Job(input="go"))
    assert paused.status == "paused" and paused.pending_action is not None
    assert paused.pending_action.type == "user_input"
    state = _stored_state(first, paused)
    assert state.payload["stage"] == "manager" and state.payload["worker"] == "boss"

    model2 = Model(boss=_boss_script()[1:], writer=["written"])
    desk2 = make_desk(model2, tmp_path)
    boss2 = ToolUsingManager(name="boss", instructions="boss", tools=[ask])
    done = await desk2.aresume(paused.run_id, "the writer", runner=team(manager=boss2))
    assert done.status == "completed" and done.content == "written"
    assert model2.order() == ["boss", "boss", "writer"]
    tool_message = model2.messages_of("boss")[0][-1]
    assert tool_message["role"] == "tool" and "the writer" in tool_message["content"]
    assert_metrics_match_llm_events(done)


def _tool_boss(name: str) -> ToolUsingManager:
    return ToolUsingManager(name=name, instructions="boss", tools=[ask])


def _stored_state(desk: Any, report: Report) -> RunState:
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.state is not None
    return record.state  # type: ignore[no-any-return]
