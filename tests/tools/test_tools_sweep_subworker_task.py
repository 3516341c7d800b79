"""A spawn whose task a Job refuses (empty, blank) is a policy error that spends no spawn."""

from __future__ import annotations

import pytest

from deskwork import Desk, ToolCall, ToolResult
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.tools import Tool, aexecute_tool, create_subworker_tool


async def _spawn(spawner: Tool, task: str) -> ToolResult:
    arguments = {"name": "helper", "instructions": "Help.", "task": task}
    return await aexecute_tool(spawner, ToolCall(id="c1", name=spawner.name, arguments=arguments))


@pytest.mark.parametrize("task", ["", "   "])
async def test_a_refused_task_spends_no_spawn(task: str) -> None:
    store = InMemoryRunStore()
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter([reply("done")]), run_store=store)
    spawner = create_subworker_tool(desk, max_subworkers=1)

    refused = await _spawn(spawner, task)
    spawned = await _spawn(spawner, "summarise the notes")

    assert refused.exception_type == "SubworkerPolicy"
    assert (refused.error or "").startswith("the subworker's task is refused: Job needs an input")
    assert spawned.error is None and spawned.content == "done"  # the budget of 1 was left
    assert [run.status for run in store.list_runs()] == ["completed"]
