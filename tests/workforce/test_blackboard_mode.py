"""Workforce(mode="blackboard"): the workers become the architecture's agents."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wfkit import Model, assert_metrics_match_llm_events, deploy, make_desk, types, worker

from deskwork import ConfigurationError, Job, Workforce
from deskwork.architecture import Blackboard as BoardView
from deskwork.collaboration import Blackboard
from deskwork.testing import call_tool, structured

STOP = structured({"terminate": True})


def pick(agent: str) -> object:
    return structured({"terminate": False, "next_agent": agent, "instruction": f"go {agent}"})


def board_team(board: Blackboard | None = None) -> Workforce:
    return Workforce(
        [worker("researcher", deploy), worker("critic")],
        mode="blackboard",
        name="board-team",
        coordinator=worker("coord"),
        decider=worker("judge"),
        max_rounds=4,
        blackboard=board,
    )


async def test_blackboard_mode_runs_the_architecture_with_the_workforce_board() -> None:
    board = Blackboard()
    model = Model(coord=[pick("critic"), STOP], critic=["critique"], judge=["verdict"])
    wf = board_team(board)
    report = await make_desk(model).arun(wf, Job(input="question"))

    assert report.status == "completed" and report.content == "verdict"
    assert wf.blackboard is board
    view = BoardView(board)
    assert [(e.author, e.kind) for e in view.public] == [
        ("user", "problem"), ("critic", "contribution"), ("judge", "decision"),
    ]  # fmt: skip
    flow = [(e.type, e.source) for e in report.events if e.type.startswith(("work", "black"))]
    assert flow[:2] == [("workforce.started", "board-team"), ("blackboard.started", "board-team")]
    assert flow[-2:] == [
        ("blackboard.completed", "board-team"),
        ("workforce.completed", "board-team"),
    ]
    assert_metrics_match_llm_events(report)


async def test_blackboard_mode_pauses_and_resumes_in_a_new_process(tmp_path: Path) -> None:
    model = Model(coord=[pick("researcher")], researcher=[call_tool("deploy", target="prod")])
    paused = await make_desk(model, tmp_path).arun(board_team(), Job(input="question"))
    assert paused.status == "paused"

    desk2 = make_desk(Model(researcher=["deployed"], coord=[STOP], judge=["done"]), tmp_path)
    record = desk2.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    assert (record.state.runner_type, record.state.runner_name) == ("workforce", "board-team")
    assert record.state.payload["mode"] == "blackboard"
    assert record.state.payload["child"]["payload"]["phase"] == "agent"

    wf2 = board_team()
    desk2.register(wf2)
    done = await desk2.aresume(paused.run_id, True)
    assert done.status == "completed" and done.content == "done"
    public = [(e.author, e.content) for e in BoardView(wf2.blackboard).public]
    assert public[:2] == [("user", "question"), ("researcher", "deployed")]
    assert types(done.events, "workforce.") == [
        "workforce.started", "workforce.started", "workforce.completed",
    ]  # fmt: skip
    assert_metrics_match_llm_events(done)


async def test_resume_without_the_paused_agent_is_refused_and_the_run_stays_paused() -> None:
    model = Model(coord=[pick("researcher"), STOP], researcher=[call_tool("deploy", target="x")])
    desk = make_desk(model)
    paused = await desk.arun(board_team(), Job(input="question"))
    without = Workforce(
        [worker("critic")], mode="blackboard", name="board-team", coordinator=worker("coord")
    )
    with pytest.raises(ConfigurationError, match="'agent' 'researcher': not part of blackboard"):
        await desk.aresume(paused, True, runner=without)  # was: the run failed for good
    assert desk.run_store.get_run(paused.run_id).status == "paused"  # type: ignore[union-attr]
    done = await desk.aresume(paused, True, runner=board_team())
    assert done.status == "completed" and done.content == "judge done"


def test_default_channel_and_blackboard_are_created() -> None:
    wf = Workforce([worker("a")])
    assert wf.channel is not None and wf.blackboard is not None
    assert wf.channel is not Workforce([worker("a")]).channel


async def test_concurrent_runs_never_mix_entries_on_the_shared_board() -> None:
    model = Model(latency=0.02)
    wf = Workforce([worker("a"), worker("b")], mode="blackboard", name="bb", max_rounds=2)
    desk = make_desk(model)
    first, second = await asyncio.gather(
        desk.arun(wf, Job(input="P1")), desk.arun(wf, Job(input="P2"))
    )

    assert first.status == "completed"
    assert second.status == "failed" and "in use by another run" in second.errors[0]
    prompts = [str(messages[-1]["content"]) for _, messages, _ in model.seen]
    assert prompts and all("P1" in p and "P2" not in p for p in prompts)
    again = await desk.arun(wf, Job(input="P3"))
    assert again.status == "completed"


async def test_resume_keeps_keys_written_to_the_shared_board_after_the_pause() -> None:
    board = Blackboard()
    board.write("notes", "before", author="someone")
    model = Model(coord=[pick("researcher")], researcher=[call_tool("deploy", target="prod")])
    desk = make_desk(model)
    wf = board_team(board)
    paused = await desk.arun(wf, Job(input="question"))
    assert paused.status == "paused"
    board.write("notes", "after", author="someone")
    board.write("other", 1, author="someone")
    board.write("private:critic", [], author="another-run")

    done = await desk.aresume(paused, True)
    assert done.status == "completed"
    assert board.read("notes") == "after" and board.read("other") == 1
    assert not board.exists("private:critic")
    assert [e.author for e in BoardView(board).public][:2] == ["user", "researcher"]
