"""BlackboardArchitecture: rounds, coordinator misbehaviour, fallbacks, events, pause/resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bbkit import Model, ask, board_events, deploy, llm_calls, make_desk, worker

from deskwork import ConfigurationError, Job, Worker
from deskwork.architecture import DEFAULT_COORDINATOR_INSTRUCTIONS, BlackboardArchitecture
from deskwork.architecture.blackboard import CONTRIBUTOR_INSTRUCTIONS
from deskwork.testing import Turn, call_tool, fail, structured


def pick(agent: str, instruction: str | None = None) -> Turn:
    return structured({"terminate": False, "next_agent": agent, "instruction": instruction})


STOP = structured({"terminate": True, "next_agent": None, "instruction": None})


def arch(
    researcher: Worker | None = None,
    *,
    coordinator: Worker | None = None,
    decider: Worker | None = None,
    max_rounds: int = 10,
) -> BlackboardArchitecture:
    return BlackboardArchitecture(
        agents={"researcher": researcher or worker("researcher"), "critic": worker("critic")},
        coordinator=coordinator,
        decider=decider,
        max_rounds=max_rounds,
    )


async def test_coordinator_rounds_then_decider() -> None:
    model = Model(
        coord=[pick("researcher", "find data"), pick("critic", "check it"), STOP],
        researcher=["data says 42"],
        critic=["ANSWER: 42 is right"],
        judge=["final: 42"],
    )
    desk = make_desk(model)
    a = arch(coordinator=worker("coord"), decider=worker("judge"))
    report = await desk.arun(a, Job(input="what is it?"))

    assert report.status == "completed" and report.content == "final: 42"
    assert model.order() == ["coord", "researcher", "coord", "critic", "coord", "judge"]
    researcher_prompt = model.prompts_of("researcher")[0]
    assert researcher_prompt.startswith("Blackboard:\n[1] user (problem):\nwhat is it?")
    assert researcher_prompt.endswith("Your instruction: find data")
    assert "[2] researcher (contribution):\ndata says 42" in model.prompts_of("coord")[1]
    assert "[3] critic (answer):\n42 is right" in model.prompts_of("judge")[0]
    assert board_events(report.events) == [
        ("blackboard.started", {"agents": ["researcher", "critic"], "coordinator": "coord",
                                "decider": "judge", "max_rounds": 10}),
        ("blackboard.round", {"round": 1, "agent": "researcher", "instruction": "find data"}),
        ("blackboard.posted", {"round": 1, "author": "researcher", "kind": "contribution"}),
        ("blackboard.round", {"round": 2, "agent": "critic", "instruction": "check it"}),
        ("blackboard.posted", {"round": 2, "author": "critic", "kind": "answer"}),
        ("blackboard.posted", {"round": 3, "author": "judge", "kind": "decision"}),
        ("blackboard.completed", {"status": "completed", "rounds": 3}),
    ]  # fmt: skip
    assert report.metrics["llm_calls"] == 6 == llm_calls(report.events)
    stored = desk.run_store.get_events(report.run_id)
    assert [e.type for e in stored] == [e.type for e in report.events]


async def test_members_get_their_system_text_and_the_roster() -> None:
    model = Model(coord=[pick("critic"), STOP])
    await make_desk(model).arun(arch(coordinator=worker("coord")), Job(input="q"))
    coord_messages = model.seen[0][1]
    roster = "- researcher: researcher\n- critic: critic"
    assert coord_messages[1] == {
        "role": "system",
        "content": DEFAULT_COORDINATOR_INSTRUCTIONS.format(agents=roster),
    }
    assert '{"terminate": <bool>' in coord_messages[1]["content"]
    critic_messages = model.seen[1][1]
    assert critic_messages[1] == {"role": "system", "content": CONTRIBUTOR_INSTRUCTIONS}
    assert critic_messages[-1]["content"].endswith(
        "Your instruction: Contribute what you can to solve the problem."
    )


async def test_coordinator_misbehaviour_skips_rounds_with_warnings() -> None:
    malformed = ["not json"] * 4  # every structured-output attempt of round 1 fails
    model = Model(
        coord=[*malformed, pick("ghost"), structured({"terminate": False}), pick("critic"), STOP]
    )
    report = await make_desk(model).arun(arch(coordinator=worker("coord")), Job(input="q"))

    assert report.status == "completed" and report.content == "critic done"
    warnings = [p for t, p in board_events(report.events) if t == "workforce.warning"]
    assert [(w["round"], w["reason"]) for w in warnings] == [
        (1, "coordinator_failed"),
        (2, "unknown_agent"),
        (3, "malformed_coordinator_output"),
    ]
    assert "structured output" in warnings[0]["detail"]
    assert warnings[1]["detail"] == "'ghost' is not one of ['researcher', 'critic']"
    rounds = [p["round"] for t, p in board_events(report.events) if t == "blackboard.round"]
    assert rounds == [4]
    assert board_events(report.events)[-1][1] == {"status": "completed", "rounds": 5}


async def test_round_robin_without_coordinator_until_max_rounds() -> None:
    model = Model(researcher=["r1", "r2"], critic=["c1"])
    report = await make_desk(model).arun(arch(max_rounds=3), Job(input="q"))
    assert model.order() == ["researcher", "critic", "researcher"]
    chosen = [p["agent"] for t, p in board_events(report.events) if t == "blackboard.round"]
    assert chosen == ["researcher", "critic", "researcher"]
    assert report.content == "r2"  # no decider, no answer: the most recent contribution


async def test_without_decider_the_last_answer_wins_over_later_contributions() -> None:
    model = Model(researcher=["answer: forty-two"], critic=["some more thoughts"])
    report = await make_desk(model).arun(arch(max_rounds=2), Job(input="q"))
    assert report.status == "completed" and report.content == "forty-two"


async def test_without_contributions_the_run_fails_cleanly() -> None:
    model = Model(coord=[STOP])
    report = await make_desk(model).arun(arch(coordinator=worker("coord")), Job(input="q"))
    assert report.status == "failed"
    assert report.errors == ["no contribution on the blackboard to answer from"]


async def test_a_failing_agent_is_skipped_with_a_warning() -> None:
    model = Model(researcher=[fail(RuntimeError("down"))], critic=["critique"])
    report = await make_desk(model).arun(arch(max_rounds=2), Job(input="q"))
    assert report.content == "critique"
    (warning,) = [p for t, p in board_events(report.events) if t == "workforce.warning"]
    assert warning["reason"] == "agent_failed" and warning["agent"] == "researcher"
    assert "down" in warning["detail"]


def _paused_agent_setup() -> tuple[Model, BlackboardArchitecture]:
    model = Model(
        coord=[pick("researcher", "deploy it"), STOP],
        researcher=[call_tool("deploy", target="prod"), "deployed, data says 7"],
    )
    return model, arch(worker("researcher", deploy), coordinator=worker("coord"))


async def test_pause_inside_an_agent_resumes_that_agent_then_the_remaining_rounds() -> None:
    model, a = _paused_agent_setup()
    desk = make_desk(model)
    paused = await desk.arun(a, Job(input="q"))
    assert paused.status == "paused" and paused.pending_action is not None
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    payload: dict[str, Any] = record.state.payload
    assert record.state.runner_type == "blackboard"
    assert (payload["phase"], payload["round"], payload["member"]) == ("agent", 1, "researcher")
    assert payload["instruction"] == "deploy it"
    assert [e["key"] for e in payload["board"]["entries"]] == ["public"]
    assert paused.metrics["llm_calls"] == 2

    done = await desk.aresume(paused, True)
    assert done.status == "completed" and done.content == "deployed, data says 7"
    assert model.order() == ["coord", "researcher", "researcher", "coord"]
    assert done.metrics["llm_calls"] == 4 == llm_calls(done.events)


async def test_agent_pause_resumes_in_a_new_process(tmp_path: Path) -> None:
    model, a = _paused_agent_setup()
    paused = await make_desk(model, tmp_path).arun(a, Job(input="q"))

    model2 = Model(coord=[STOP], researcher=["after restart"])
    _, a2 = _paused_agent_setup()
    done = await make_desk(model2, tmp_path).aresume(paused.run_id, True, runner=a2)
    assert done.status == "completed" and done.content == "after restart"
    assert model2.order() == ["researcher", "coord"]
    assert "[2] researcher (contribution):\nafter restart" in model2.prompts_of("coord")[0]


async def test_coordinator_pause_resumes_the_coordinator(tmp_path: Path) -> None:
    # a coordinator with tools replies once with tools, then once more for the JSON decision
    script: list[Turn | str] = [call_tool("ask", question="who?"), "hmm", pick("critic")]
    script += ["thinking", STOP]
    first = make_desk(Model(coord=list(script)), tmp_path)
    paused = await first.arun(arch(coordinator=worker("coord", ask)), Job(input="q"))
    assert paused.pending_action is not None and paused.pending_action.type == "user_input"

    model2 = Model(coord=script[1:])
    a2 = arch(coordinator=worker("coord", ask))
    done = await make_desk(model2, tmp_path).aresume(paused.run_id, "the critic", runner=a2)
    assert done.status == "completed" and done.content == "critic done"
    assert model2.order() == ["coord", "coord", "critic", "coord", "coord"]
    assert model2.seen[0][1][-1] == {
        "role": "tool", "content": "the person said: the critic", "tool_call_id": "call_0",
        "name": "ask",
    }  # fmt: skip


async def test_decider_pause_resumes_the_decider() -> None:
    model = Model(coord=[pick("critic"), STOP], judge=[call_tool("deploy", target="x"), "decided"])
    desk = make_desk(model)
    a = arch(coordinator=worker("coord"), decider=worker("judge", deploy))
    paused = await desk.arun(a, Job(input="q"))
    assert paused.status == "paused"
    done = await desk.aresume(paused, True)
    assert done.status == "completed" and done.content == "decided"
    assert model.order()[-2:] == ["judge", "judge"]


async def test_resume_without_the_paused_member_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    model, a = _paused_agent_setup()
    paused = await make_desk(model, tmp_path).arun(a, Job(input="q"))
    desk = make_desk(Model(researcher=["deployed"], coord=[STOP]), tmp_path)
    other = BlackboardArchitecture(agents={"critic": worker("critic")}, coordinator=worker("coord"))
    message = "cannot resume 'agent' 'researcher': not part of blackboard 'blackboard'"
    with pytest.raises(ConfigurationError, match=message):  # was: the run failed for good
        await desk.aresume(paused.run_id, True, runner=other)
    assert desk.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]
    _, original = _paused_agent_setup()
    done = await desk.aresume(paused.run_id, True, runner=original)
    assert done.status == "completed"


async def test_stream_yields_the_run_events() -> None:
    a = arch(max_rounds=1)
    desk = make_desk(Model())
    events = [event async for event in a.stream(desk, "q")]
    assert events[0].type == "run.started" and events[-1].type == "run.completed"
    assert "blackboard.round" in [e.type for e in events]


def test_declared_workers_lists_agents_then_coordinator_and_decider() -> None:
    a = arch(coordinator=worker("coord"), decider=worker("judge"))
    assert list(a.declared_workers()) == ["researcher", "critic", "coord", "judge"]
    assert (a.name, a.runner_type) == ("blackboard", "blackboard")
