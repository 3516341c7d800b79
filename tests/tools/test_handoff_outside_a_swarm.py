"""``transfer_to_agent`` where no swarm runs fails its call with an error the model reads, and
the run goes on: it paused with a handoff that nothing would ever answer."""

from __future__ import annotations

from typing import Any

from deskwork import Desk, Job, Worker, Workforce
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool, transfer_to_agent_tool


def _desk(*turns: Any) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore()), adapter


def _transfer(agent: str) -> Any:
    return call_tool("transfer_to_agent", agent_name=agent, context="over to you")


def test_a_worker_given_the_handoff_tool_directly_is_told_no_agent_can_take_over() -> None:
    desk, adapter = _desk(_transfer("billing"), reply("I will answer myself"))
    worker = Worker(name="support", tools=[transfer_to_agent_tool(["billing"])])
    report = desk.run(worker, Job(input="refund my order"))

    assert report.status == "completed", report.errors
    assert report.content == "I will answer myself"
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "NoSwarm"
    told = [m["content"] for m in adapter.calls[1]["messages"] if m["role"] == "tool"]
    assert told == [
        "Error: transfer_to_agent: no other agent can take over: this run is not a swarm (a"
        " Workforce in swarm mode), so nothing answers a handoff; go on with the task yourself"
    ]
    types = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert "tool.failed" in types and "worker.paused" not in types


def test_a_run_started_inside_a_swarm_worker_is_not_the_swarm() -> None:
    """A run a swarm worker's tool starts (a spawned helper) has no swarm of its own."""
    desk, _ = _desk(
        call_tool("ask_helper"), _transfer("billing"), reply("helper done"), reply("done")
    )

    @tool
    async def ask_helper() -> str:
        helper = Worker(name="helper", tools=[transfer_to_agent_tool()])
        return (await desk.arun(helper, Job(input="help"))).status

    team = Workforce(
        [Worker(name="lead", tools=[ask_helper, transfer_to_agent_tool()]), Worker(name="b")],
        mode="swarm",
    )
    report = desk.run(team, Job(input="go"))

    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.content == "completed"  # not left paused


def test_a_swarm_still_switches_agents_on_a_handoff() -> None:
    desk, _ = _desk(_transfer("b"), reply("b here"))
    team = Workforce(
        [Worker(name="a", tools=[transfer_to_agent_tool(["b"])]), Worker(name="b")],
        mode="swarm",
    )
    report = desk.run(team, Job(input="go"))

    assert (report.status, report.content) == ("completed", "b here")
    assert [e.payload["to"] for e in report.events if e.type == "workforce.handoff"] == ["b"]
