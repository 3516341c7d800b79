"""A worker's report, state and messages are built without validation: they equal validated
ones (same values, fields set, repr and JSON)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Job, Message, Report, RunState, Worker
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.runtime.config import RunConfig
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(requires_confirmation=True)
def wipe(path: str) -> str:
    """Delete a path (asks first)."""
    return path


def _validated(model: BaseModel) -> BaseModel:
    """``model`` built again by validation, from the fields it was given."""
    named = {name: getattr(model, name) for name in model.model_fields_set}
    return type(model)(**named)


@pytest.mark.parametrize(
    ("turns", "status"),
    [
        ([call_tool("add", a=2, b=3), reply("The sum is 5.")], "completed"),
        ([call_tool("wipe", path="/tmp/x")], "paused"),
        ([call_tool("add", a=1, b=1)] * 3, "failed"),  # max_iterations=2
    ],
)
def test_report_and_state_equal_validated_ones(turns: list[Any], status: str) -> None:
    config = RunConfig(adapter=ScriptedAdapter(turns), model="scripted/m", max_iterations=2)
    report, state = Worker(name="w", tools=[add, wipe]).run(config, Job(input="go"))
    assert report.status == status and state.status == status
    built_models = [(report, Report), (state, RunState), *((m, Message) for m in state.messages)]
    for built, kind in built_models:
        checked = _validated(built)
        assert type(built) is kind and built == checked and repr(built) == repr(checked)
        assert built.model_dump_json() == checked.model_dump_json()


class _Thinking(BaseModelAdapter):
    """Replies with reasoning and thinking blocks, which the run must keep as they came."""

    def __init__(self) -> None:
        self.blocks = [{"type": "thinking", "thinking": "add them"}]

    async def acomplete(self, **params: Any) -> ModelResponse:
        return ModelResponse(content="5", reasoning_content="2 + 3", thinking_blocks=self.blocks)


def test_a_reply_with_thinking_is_kept_as_validation_would_keep_it() -> None:
    adapter = _Thinking()
    config = RunConfig(adapter=adapter, model="scripted/m")
    report, state = Worker(name="w").run(config, Job(input=["not", "parts"]))
    adapter.blocks[0]["thinking"] = "changed later"
    user, answer = state.messages
    assert answer.thinking_blocks == [{"type": "thinking", "thinking": "add them"}]
    assert report.reasoning_content == "2 + 3" and user.content == '["not", "parts"]'
    for message in state.messages:
        checked = _validated(message)
        assert message == checked and repr(message) == repr(checked)
