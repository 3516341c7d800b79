"""Subworkers and the desk's registry: a paused child is resumable by the run id in the spawn
tool's data, as documented, and children leave the registry as they found it."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply
from deskwork.tools import create_subworker_tool, tool

ran: list[str] = []


@tool(requires_confirmation=True)
def wire(amount: int) -> str:
    """Send money (asks first)."""
    ran.append(f"wire {amount}")
    return "sent"


def _desk(tmp_path: Path, *turns: Turn, durable: bool = False) -> Desk:
    store = None if durable else InMemoryRunStore()  # a durable desk keeps its own
    return Desk(model="scripted", adapter=ScriptedAdapter(list(turns)), run_store=store,
                storage_dir=tmp_path / ".deskwork", durable=durable)  # fmt: skip


@pytest.mark.parametrize("durable", [False, True], ids=["plain", "durable"])
def test_a_paused_child_resumes_by_its_run_id(tmp_path: Path, durable: bool) -> None:
    desk = _desk(
        tmp_path,
        call_tool(
            "spawn_subworker", name="payer", instructions="pay", task="pay 5", tools=["wire"]
        ),
        call_tool("wire", amount=5),  # the child pauses for confirmation
        reply("lead: the payer waits for approval"),
        reply("payer: paid"),  # the child, once resumed
        durable=durable,
    )
    spawn = create_subworker_tool(desk, available_tools=[wire])
    lead = desk.run(Worker(name="lead", tools=[spawn]), Job(input="pay"))
    result = lead.tool_calls[0].result
    assert result is not None and result.data["status"] == "paused"

    # a model-made worker is not registered by name (deskwork serve would offer it)
    assert desk.get_runner("worker", "payer") is None
    assert [r.name for r in desk.registered_runners()] == ["lead"]
    child = desk.resume(result.data["run_id"], True)  # was RunnerNotRegisteredError

    assert (child.status, child.content) == ("completed", "payer: paid")
    assert ran[-1:] == ["wire 5"]
    assert desk.get_runner("worker", "payer") is None  # a durable resume named it
    desk.close()


def test_a_finished_child_leaves_no_registration(tmp_path: Path) -> None:
    desk = _desk(
        tmp_path,
        call_tool("spawn_subworker", name="helper", instructions="help", task="t"),
        reply("helper: done"),
        reply("lead: done"),
    )
    spawn = create_subworker_tool(desk)
    desk.run(Worker(name="lead", tools=[spawn]), Job(input="go"))
    assert desk.get_runner("worker", "helper") is None


def test_parallel_children_of_one_name_give_the_name_back(tmp_path: Path) -> None:
    spec = {"name": "helper", "instructions": "help", "task": "t"}
    adapter = ScriptedAdapter(
        [
            call_tools(("spawn_subworker", spec), ("spawn_subworker", spec)),
            reply("one"),
            reply("two"),
            reply("lead: done"),
        ],
        latency=0.05,  # the two child runs overlap
    )
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    own = Worker(name="helper", instructions="the user's own helper")
    desk.register(own)
    spawn = create_subworker_tool(desk)
    report = desk.run(Worker(name="lead", tools=[spawn]), Job(input="go"))
    assert sorted(c.result.content or "" for c in report.tool_calls if c.result) == ["one", "two"]
    assert desk.get_runner("worker", "helper") is own  # no child ever replaced it
