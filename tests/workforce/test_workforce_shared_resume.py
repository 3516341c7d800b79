"""What workers share through ``Workforce.channel`` and ``Workforce.blackboard`` survives a pause
and a resume in a new process: the paused state keeps them and the resumed workforce gets them
back. A resumed reviewer read ``null`` for the board key and ``[]`` from the channel the
analyst had written before the pause (both lived only in the first process's objects)."""

from __future__ import annotations

import json
from pathlib import Path

from wfkit import Model, make_desk, worker

from deskwork import Job, Workforce
from deskwork.collaboration import (
    Blackboard,
    Channel,
    blackboard_read_tool,
    blackboard_write_tool,
    channel_receive_tool,
    channel_send_tool,
)
from deskwork.testing import call_tool
from deskwork.tools import tool


@tool(requires_confirmation=True)
def publish(text: str) -> str:
    """Publish (asks first)."""
    return f"published {text}"


def team() -> Workforce:
    channel, board = Channel(), Blackboard()
    analyst = worker(
        "analyst", blackboard_write_tool(board, "analyst"), channel_send_tool(channel, "analyst")
    )
    reviewer = worker(
        "reviewer", publish, blackboard_read_tool(board), channel_receive_tool(channel, "reviewer")
    )
    return Workforce(
        [analyst, reviewer], mode="collaborate", channel=channel, blackboard=board, name="team"
    )


def analyst_then_pause() -> Model:
    return Model(
        analyst=[
            call_tool("blackboard_write", key="score", value=95),
            call_tool("channel_send", recipient="reviewer", content="check the score"),
            "written",
        ],
        reviewer=[call_tool("publish", text="draft")],
    )


def reviewer_reads() -> Model:
    return Model(
        reviewer=[call_tool("blackboard_read", key="score"), call_tool("channel_receive"), "ok"]
    )


def tool_results(model: Model) -> list[str]:
    return [m[-1]["content"] for m in model.messages_of("reviewer") if m[-1]["role"] == "tool"]


async def test_a_resume_in_a_new_process_gets_the_board_and_the_channel_back(
    tmp_path: Path,
) -> None:
    paused = await make_desk(analyst_then_pause(), tmp_path).arun(team(), Job(input="go"))
    assert paused.status == "paused"

    model = reviewer_reads()
    desk = make_desk(model, tmp_path)
    wf = team()
    desk.register(wf)
    report = await desk.aresume(paused.run_id, True)
    assert report.status == "completed", report.errors
    published, score, inbox = tool_results(model)
    assert (published, score) == ("published draft", "95")
    assert [m["content"] for m in json.loads(inbox)] == ["check the score"]
    assert wf.blackboard.read("score") == 95


async def test_a_resume_in_the_same_process_keeps_the_live_board_and_channel() -> None:
    model = analyst_then_pause()
    model.scripts["reviewer"] += reviewer_reads().scripts["reviewer"]
    desk = make_desk(model)
    wf = team()
    paused = await desk.arun(wf, Job(input="go"))
    wf.blackboard.write("score", 97, author="editor")  # changed since the pause: kept
    assert [m.content for m in wf.channel.receive("reviewer")] == ["check the score"]  # read
    report = await desk.aresume(paused, True)
    assert report.status == "completed", report.errors
    assert tool_results(model) == ["published draft", "97", "[]"]
