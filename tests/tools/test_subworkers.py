"""Subworker tools: child runs through the desk, guardrails, status handling."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import ConfigurationError, Desk, Event, Job, ToolCall, ToolResult, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import Tool, aexecute_tool, create_subworker_tool, create_swarm_tool, tool


def scripted_desk(*turns: Any, model: str | None = "scripted/m") -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    return Desk(model=model, adapter=adapter, run_store=InMemoryRunStore()), adapter


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def spawn(spawner: Tool, **arguments: Any) -> ToolResult:
    args = {"name": "helper", "instructions": "Help.", "task": "do it", **arguments}
    return await aexecute_tool(spawner, ToolCall(id="c1", name=spawner.name, arguments=args))


async def test_a_lead_delegates_and_gets_the_child_output() -> None:
    desk, adapter = scripted_desk(
        call_tool(
            "spawn_subworker", name="researcher", instructions="Research.", task="frameworks"
        ),
        reply("three frameworks"),  # the child's answer
        reply("summary: three frameworks"),  # the lead, after the tool result
    )
    bus_events: list[Event] = []
    desk.event_bus.subscribe("*", bus_events.append)
    spawner = create_subworker_tool(desk)
    lead = Worker(name="lead", tools=[spawner])

    report = await desk.arun(lead, Job(input="Research agent frameworks"))

    assert report.status == "completed"
    assert report.content == "summary: three frameworks"
    result = report.tool_calls[0].result
    assert result is not None and result.error is None
    assert result.content == "three frameworks"
    data = result.data
    assert set(data) == {"run_id", "status", "worker", "metrics"}
    assert data["status"] == "completed" and data["worker"] == "researcher"
    assert data["metrics"]["llm_calls"] == 1
    child_run = data["run_id"]
    assert child_run != report.run_id

    record = desk.run_store.get_run(child_run)
    assert record is not None and record.status == "completed"
    assert record.output == "three frameworks"
    child_events = desk.run_store.get_events(child_run)
    child_types = [e.type for e in child_events]
    assert child_types[0] == "run.started" and child_types[-1] == "run.completed"
    assert "worker.completed" in child_types
    assert {e.run_id for e in child_events} == {child_run}
    assert {e.run_id for e in bus_events} == {report.run_id, child_run}
    assert child_run not in {e.run_id for e in report.events}

    child_request = adapter.calls[1]
    assert child_request["messages"][0]["content"] == "Research."
    assert child_request["messages"][-1]["content"] == "frameworks"
    assert child_request["model"] == "scripted/m"


async def test_the_child_gets_the_requested_tools_and_limits() -> None:
    desk, adapter = scripted_desk(call_tool("lookup", query="x"), reply("answer"))
    spawner = create_subworker_tool(desk, available_tools=[lookup, delete], max_tool_calls=3)
    result = await spawn(spawner, tools=["lookup", "lookup"])
    assert result.error is None and result.content == "answer"
    offered = [t["function"]["name"] for t in adapter.calls[0]["tools"]]
    assert offered == ["lookup"]
    assert adapter.calls[1]["messages"][-1]["content"] == "found x"


async def test_child_run_budgets_apply() -> None:
    desk, _ = scripted_desk(call_tool("lookup", query="a"), call_tool("lookup", query="b"))
    spawner = create_subworker_tool(desk, available_tools=[lookup], max_iterations=1)
    result = await spawn(spawner, tools=["lookup"])
    assert result.error is not None and "max_iterations exceeded (1)" in result.error
    assert result.data["status"] == "failed"
    assert desk.run_store.get_run(result.data["run_id"]).status == "failed"  # type: ignore[union-attr]

    desk, _ = scripted_desk(
        Turn(tool_calls=[("lookup", {"query": "a"}), ("lookup", {"query": "b"})])
    )
    spawner = create_subworker_tool(desk, available_tools=[lookup], max_tool_calls=1)
    result = await spawn(spawner, tools=["lookup"])
    assert result.error is not None and "max_tool_calls exceeded (1)" in result.error


async def test_the_spawn_budget_counts_successful_spawns_only() -> None:
    desk, adapter = scripted_desk(reply("one"), reply("two"))
    spawner = create_subworker_tool(desk, allowed_models=["scripted/m"], max_subworkers=2)
    rejected = await spawn(spawner, model="other/m")
    assert rejected.error is not None and "not allowed" in rejected.error
    for bad_name in ("", "   "):  # a name no Worker takes: refused, no spawn spent
        refused = await spawn(spawner, name=bad_name)
        assert refused.error is not None and refused.exception_type == "SubworkerPolicy"
    assert (await spawn(spawner)).content == "one"
    assert (await spawn(spawner)).content == "two"
    third = await spawn(spawner)
    assert third.error == "subworker budget exhausted: max_subworkers=2"
    assert third.data is None
    assert len(adapter.calls) == 2


@pytest.mark.parametrize(
    ("options", "arguments", "message"),
    [
        (
            {"allowed_models": {"scripted/m"}},
            {"model": "openai/gpt-5"},
            "model 'openai/gpt-5' is not allowed for subworkers (allowed: scripted/m)",
        ),
        (
            {"available_tools": [lookup, delete], "max_tools_per_subworker": 1},
            {"tools": ["lookup", "delete"]},
            "too many tools for one subworker: 2 > 1",
        ),
        (
            {"available_tools": [lookup]},
            {"tools": ["lookup", "rm_rf"]},
            "unknown tools: rm_rf (available: lookup)",
        ),
    ],
    ids=["model-policy", "tool-budget", "tool-allowlist"],
)
async def test_guardrails_reject_before_any_child_run(
    options: dict[str, Any], arguments: dict[str, Any], message: str
) -> None:
    desk, adapter = scripted_desk(reply("never"))
    result = await spawn(create_subworker_tool(desk, **options), **arguments)
    assert result.error == message
    assert adapter.calls == []
    assert desk.run_store.list_runs() == []


async def test_a_spawn_needs_a_model() -> None:
    desk, _ = scripted_desk(reply("never"), model=None)
    result = await spawn(create_subworker_tool(desk))
    assert result.error is not None and result.error.startswith("no model for the subworker")
    result = await spawn(create_subworker_tool(desk, default_model="scripted/d"))
    assert result.error is None


async def test_model_choice_prefers_the_call_then_the_default() -> None:
    desk, adapter = scripted_desk(reply("a"), reply("b"))
    spawner = create_subworker_tool(desk, default_model="scripted/default")
    await spawn(spawner)
    await spawn(spawner, model="scripted/chosen")
    assert [c["model"] for c in adapter.calls] == ["scripted/default", "scripted/chosen"]


async def test_a_paused_child_is_an_error_with_the_pending_action_type() -> None:
    desk, _ = scripted_desk(call_tool("delete", path="/tmp/x"))
    spawner = create_subworker_tool(desk, available_tools=[delete])
    result = await spawn(spawner, tools=["delete"])
    assert result.error is not None and "paused waiting for confirmation" in result.error
    assert result.data["status"] == "paused"
    assert result.data["pending_action_type"] == "confirmation"
    record = desk.run_store.get_run(result.data["run_id"])
    assert record is not None and record.status == "paused"


async def test_a_failed_child_is_an_error_with_its_run() -> None:
    desk, _ = scripted_desk()  # the child's model call fails: the script is empty
    result = await spawn(create_subworker_tool(desk))
    assert result.error is not None and result.error.startswith("subworker 'helper' failed: ")
    assert result.data["status"] == "failed" and result.data["run_id"]


async def test_a_subworker_does_not_replace_a_registered_runner() -> None:
    desk, _ = scripted_desk(reply("one"), reply("two"))
    lead = Worker(name="lead")
    desk.register(lead)
    spawner = create_subworker_tool(desk)
    assert (await spawn(spawner, name="lead")).content == "one"
    assert desk.get_runner("worker", "lead") is lead
    assert (await spawn(spawner, name="temp")).content == "two"
    assert desk.get_runner("worker", "temp") is None


async def test_swarm_alias_and_bad_budgets() -> None:
    desk, _ = scripted_desk(reply("ok"))
    alias = create_swarm_tool(desk, max_subworkers=1)
    assert alias.name == "spawn_agent"
    assert set(alias.schema["properties"]) == {"name", "instructions", "task", "tools", "model"}
    assert alias.schema["required"] == ["name", "instructions", "task"]
    assert (await spawn(alias)).content == "ok"
    assert (await spawn(alias)).error == "subworker budget exhausted: max_subworkers=1"
    with pytest.raises(ConfigurationError, match="max_subworkers"):
        create_subworker_tool(desk, max_subworkers=0)
    with pytest.raises(ConfigurationError, match="max_iterations"):
        create_subworker_tool(desk, max_iterations=0)


async def test_parent_metrics_include_subworker_usage() -> None:
    """Usage of child runs is part of the parent's totals (and counted as nested runs)."""
    from deskwork import Desk, Job, Worker
    from deskwork.store import InMemoryRunStore
    from deskwork.testing import ScriptedAdapter, Turn, call_tool
    from deskwork.tools import create_subworker_tool

    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    adapter = ScriptedAdapter(
        [
            call_tool("spawn_subworker", name="helper", instructions="help", task="do it"),
            Turn(content="child done", usage=usage, cost=0.5),
            Turn(content="parent done", usage=usage, cost=0.25),
        ]
    )
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    lead = Worker(name="lead", tools=[create_subworker_tool(desk=desk)])
    report = await desk.arun(lead, Job(input="delegate"))
    assert report.status == "completed", report.errors
    child_run = report.tool_calls[0].result.data["run_id"]  # type: ignore[union-attr]
    child = desk.run_store.get_run(child_run)
    assert child is not None and child.state is not None
    assert child.state.metrics["llm_calls"] == 1
    assert report.metrics["nested_runs"] == 1
    assert report.metrics["llm_calls"] == 3  # two of the lead's, one of the child's
    assert report.metrics["cost"] == 0.75
    stored = desk.run_store.get_run(report.run_id)
    assert stored is not None and stored.state is not None
    assert stored.state.metrics["llm_calls"] == 3
