"""The team: a manager that picks the coder, a coder, a reviewer and a narrator."""

from __future__ import annotations

from pydantic import BaseModel, Field

from deskwork import Worker
from deskwork.collaboration import (
    Blackboard,
    Channel,
    blackboard_read_tool,
    blackboard_write_tool,
    channel_receive_tool,
    channel_send_tool,
)
from deskwork.tools import Tool
from deskwork.workforce import Workforce

ROLES = ("manager", "coder", "reviewer", "narrator")


class ReviewReport(BaseModel):
    """The reviewer's structured report of the change."""

    verdict: str = Field(description="approve or request_changes")
    changed_files: list[str]
    tests_passed: bool
    summary: str
    risks: list[str] = Field(default_factory=list)


def build_team(tools: dict[str, Tool], channel: Channel, board: Blackboard) -> Workforce:
    """The managed workforce of the main run."""
    manager = Worker(
        name="manager",
        instructions="You are the manager of a small software team. Pick the team member"
        " best suited to the task: the coder changes code, the reviewer and the narrator"
        " only report.",
    )
    coder = Worker(
        name="coder",
        instructions="You are the coder. Work only inside the project folder, with the"
        " tools. Run the tests first, read the code (search_docs helps), make the smallest"
        " fix with replace_in_file, and run the tests again. Then remember the decision,"
        " write a short record under the blackboard key 'fix', send the reviewer a"
        " message on the channel, and answer with what you changed and the test result.",
        tools=[
            *(tools[n] for n in ("list_files", "read_file", "search_docs", "run_tests")),
            *(tools[n] for n in ("replace_in_file", "write_file", "remember")),
            blackboard_write_tool(board, "coder"),
            channel_send_tool(channel, "coder"),
        ],
    )
    return Workforce([coder, build_reviewer(tools, channel, board), build_narrator()],
                     mode="managed", manager=manager, name="coding_team",
                     channel=channel, blackboard=board)  # fmt: skip


def build_reviewer(tools: dict[str, Tool], channel: Channel, board: Blackboard) -> Worker:
    """Reads the coder's message, the blackboard and the notes; reports on the change."""
    return Worker(
        name="reviewer",
        instructions="You are the reviewer. The job lists the changed files, their diff"
        " and the test results. Read your channel messages, the blackboard key 'fix' and"
        " the coder's notes (recall), then report on the change, citing only the changed"
        " files you were given.",
        tools=[
            channel_receive_tool(channel, "reviewer"),
            blackboard_read_tool(board),
            tools["recall"],
            tools["read_file"],
        ],
    )


def build_narrator() -> Worker:
    """Writes the human summary."""
    return Worker(
        name="narrator",
        instructions="You are the narrator. Explain to a busy person, in three sentences"
        " at most, what was wrong, what changed (name the files) and whether the tests"
        " pass now.",
    )
