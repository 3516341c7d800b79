"""GraphRunner checks its ``durability`` when built: a misspelt value used to be accepted and
handed to LangGraph at the first run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from deskwork import Desk, Job
from deskwork.exceptions import ConfigurationError
from deskwork.graph import GraphRunner


class _State(TypedDict):
    value: int


def _graph() -> Any:
    builder = StateGraph(_State)
    builder.add_node("double", lambda state: {"value": state["value"] * 2})
    builder.add_edge(START, "double")
    builder.add_edge("double", END)
    return builder.compile()


@pytest.mark.parametrize("bad", ["bogus", "ASYNC", None, 1])
def test_an_unknown_durability_is_refused_when_the_runner_is_built(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="durability"):
        GraphRunner(_graph(), durability=bad)


@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
def test_each_known_durability_runs(durability: Any, tmp_path: Path) -> None:
    desk = Desk(model="m", storage_dir=tmp_path)  # not .deskwork/ in the working directory
    report = desk.run(GraphRunner(_graph(), durability=durability), Job(input={"value": 2}))
    assert report.status == "completed", report.errors
