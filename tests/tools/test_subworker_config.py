"""``create_subworker_tool``: a configuration no spawn could honour fails when the tool is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskwork import ConfigurationError, Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import create_subworker_tool


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk(model="gpt-4", adapter=ScriptedAdapter([]), run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"allowed_models": "gpt-4"}, "allowed_models must be a set of names, not 'gpt-4'"),
        ({"available_tools": [lambda query: query]}, "available_tools must hold tools"),
        ({"max_subworkers": 1.5}, "max_subworkers must be an int >= 1, got 1.5"),
        ({"max_iterations": "10"}, "max_iterations must be an int >= 1, got '10'"),
        ({"max_tool_calls": True}, "max_tool_calls must be an int >= 0, got True"),
        ({"structured_output_retries": -1}, "structured_output_retries must be an int >= 0"),
    ],
)
def test_a_configuration_no_spawn_could_honour_is_refused(
    desk: Desk, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        create_subworker_tool(desk, **options)


def test_a_desk_that_is_not_a_desk_is_refused() -> None:
    # it was taken; each spawn then failed with "'NoneType' object has no attribute 'model'"
    with pytest.raises(ConfigurationError, match="desk must be a Desk"):
        create_subworker_tool(None)  # type: ignore[arg-type]


def test_allowed_models_as_a_set_lets_that_model_spawn(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(
        [
            call_tool("spawn_subworker", name="helper", instructions="help", task="t"),
            reply("child answer"),
            reply("lead done"),
        ]
    )
    desk = Desk(model="gpt-4", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    spawn = create_subworker_tool(desk, allowed_models={"gpt-4"})
    report = desk.run(Worker(name="lead", tools=[spawn]), Job(input="go"))
    result = report.tool_calls[0].result
    assert result is not None and (result.error, result.content) == (None, "child answer")
