"""spawn_subworker takes ``null`` for its optional fields, as OpenAI's strict mode sends them."""

from __future__ import annotations

from deskwork import Desk, ToolCall
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.tools import aexecute_tool, create_subworker_tool


async def test_null_tools_and_model_mean_not_given() -> None:
    adapter = ScriptedAdapter([reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    spawner = create_subworker_tool(desk)
    arguments = {"name": "helper", "instructions": "Help.", "task": "t", "tools": None}
    call = ToolCall(id="c1", name=spawner.name, arguments={**arguments, "model": None})

    result = await aexecute_tool(spawner, call)

    assert result.error is None and result.content == "done"
    assert result.data["status"] == "completed"


def test_the_schema_still_offers_tools_as_a_list() -> None:
    spawner = create_subworker_tool(Desk(model="scripted/m", run_store=InMemoryRunStore()))

    assert spawner.schema["properties"]["tools"]["type"] == "array"
    assert spawner.schema["required"] == ["name", "instructions", "task"]
