"""The subworkers product document's samples no other test runs: the minimal example with its
documented import paths, and the API sample with every documented argument."""

from __future__ import annotations

from pathlib import Path

from deskwork.core.job import Job
from deskwork.desk import Desk
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import create_subworker_tool, tool
from deskwork.worker import Worker


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def test_minimal_example_runs_with_the_documented_imports(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(
        [
            call_tool("spawn_subworker", name="scout", instructions="Research.", task="list them"),
            reply("A, B and C"),  # the subworker
            reply("Top frameworks: A, B and C"),  # the lead, after the tool result
        ]
    )
    desk = Desk(model="deepseek/deepseek-chat", adapter=adapter, storage_dir=tmp_path)
    spawn_subworker = create_subworker_tool(desk=desk, max_subworkers=3)
    lead = Worker(
        name="Lead",
        model="deepseek/deepseek-chat",
        tools=[spawn_subworker],
        instructions="Delegate work with spawn_subworker and synthesize results.",
    )

    report = desk.run(lead, Job(input="Research top agent frameworks."))

    assert report.status == "completed" and report.content == "Top frameworks: A, B and C"
    result = report.tool_calls[0].result
    assert result is not None and result.content == "A, B and C"
    child = desk.run_store.get_run(result.data["run_id"])
    assert child is not None and child.status == "completed"  # persisted like any run
    assert adapter.calls[1]["model"] == "deepseek/deepseek-chat"


def test_api_sample_with_every_documented_argument(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(
        [
            call_tool(
                "spawn_subworker",
                name="searcher",
                instructions="Search.",
                task="agent frameworks",
                tools=["search"],
            ),
            call_tool("search", query="agent frameworks"),  # the subworker uses its tool
            reply("found three"),
            reply("done"),
        ]
    )
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path)  # fmt: skip
    spawn_subworker = create_subworker_tool(
        desk=desk,
        available_tools=[search],
        default_model="deepseek/deepseek-chat",
        allowed_models={"deepseek/deepseek-chat"},
        max_subworkers=5,
        max_tools_per_subworker=8,
        max_iterations=10,
        max_tool_calls=10,
        structured_output_retries=1,
    )
    assert spawn_subworker.name == "spawn_subworker"
    report = desk.run(Worker(name="lead", tools=[spawn_subworker]), Job(input="go"))

    assert report.status == "completed" and report.content == "done"
    result = report.tool_calls[0].result
    assert result is not None and (result.error, result.content) == (None, "found three")
    assert {"run_id", "status", "worker"} <= set(result.data)
    assert (result.data["status"], result.data["worker"]) == ("completed", "searcher")
    assert [c["model"] for c in adapter.calls[1:3]] == ["deepseek/deepseek-chat"] * 2
    assert adapter.calls[2]["messages"][-1]["content"] == "results for agent frameworks"
