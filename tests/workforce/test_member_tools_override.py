"""A composite run's ``Job.tools_override`` is the whole team's: each member gets the entries
it can use, without a warning for the names another member has; an entry no member can use is
logged once per run."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from wfkit import Model, lookup, make_desk, worker

from deskwork import Job, Workforce
from deskwork.architecture import BlackboardArchitecture
from deskwork.testing import structured
from deskwork.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Shout a text."""
    return text.upper()


def offered(model: Model, name: str) -> list[list[str]]:
    """The tool names offered to ``name`` in each of its model calls."""
    return [
        [t["function"]["name"] for t in tools or ()] for who, _, tools in model.seen if who == name
    ]


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def pick(agent: str) -> Any:
    return structured({"terminate": False, "next_agent": agent, "instruction": "go"})


def board(*, workforce: bool) -> Any:
    agents = [worker("researcher", lookup), worker("analyst", add)]
    if workforce:
        return Workforce(agents, mode="blackboard", name="team", max_rounds=2)
    return BlackboardArchitecture(agents={a.name: a for a in agents}, max_rounds=2, name="team")


@pytest.mark.parametrize("workforce", [False, True])
async def test_each_blackboard_agent_gets_its_own_override_names_without_a_warning(
    workforce: bool, caplog: pytest.LogCaptureFixture
) -> None:
    model = Model()
    job = Job(input="go", tools_override=["lookup", "add", shout])
    with caplog.at_level(logging.WARNING):
        report = await make_desk(model).arun(board(workforce=workforce), job)

    assert report.status == "completed"
    assert offered(model, "researcher") == [["lookup", "shout"]]  # round 1 (round robin)
    assert offered(model, "analyst") == [["add", "shout"]]  # round 2
    assert warnings(caplog) == []


async def test_an_override_name_no_agent_has_is_logged_once_a_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = Model(coord=[pick("researcher"), pick("analyst"), pick("researcher")])
    arch = BlackboardArchitecture(
        agents={"researcher": worker("researcher", lookup), "analyst": worker("analyst", add)},
        coordinator=worker("coord"),
        max_rounds=3,
        name="team",
    )
    with caplog.at_level(logging.WARNING):
        await make_desk(model).arun(arch, Job(input="go", tools_override=["lookup", "serach", 7]))

    assert offered(model, "researcher") == [["lookup"], ["lookup"]]
    assert offered(model, "analyst") == [[]]
    (message,) = warnings(caplog)
    assert message.startswith("blackboard 'team': Job.tools_override entries ignored")
    assert message.endswith(
        "(not a Tool, nor the name of one of the members' tools: add, lookup): 'serach', int object"
    )


async def test_collaborating_workers_get_their_own_override_names_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = Model()
    team = Workforce(
        [worker("researcher", lookup), worker("analyst", add)], mode="collaborate", name="team"
    )
    with caplog.at_level(logging.WARNING):
        await make_desk(model).arun(team, Job(input="go", tools_override=["lookup", "add", "x"]))

    assert offered(model, "researcher") == [["lookup"]]
    assert offered(model, "analyst") == [["add"]]
    (message,) = warnings(caplog)
    assert message.startswith("workforce 'team': Job.tools_override entries ignored")
    assert message.endswith(": 'x'")
