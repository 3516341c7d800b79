"""``Job.tools_override`` entries that give different tools of one name leave the last of
them (the seed's rule), and the run says so: a user who passed two tools named ``search``
learns that the model was offered only one."""

from __future__ import annotations

import logging

import pytest

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool(name="search")
def search_web(query: str) -> str:
    """Search the web."""
    return f"web: {query}"


@tool(name="search")
def search_docs(query: str) -> str:
    """Search the docs."""
    return f"docs: {query}"


def _run(worker: Worker, job: Job) -> tuple[list[str], str | None]:
    adapter = ScriptedAdapter([call_tool("search", query="x"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(worker, job)
    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    offered = [t["function"]["name"] for t in adapter.calls[0]["tools"]]
    return offered, result.content if result is not None else None


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "deskwork.runtime"]


@pytest.mark.parametrize(
    "override", [[search_web, search_docs], ["search", search_docs]], ids=["tools", "name"]
)
def test_different_tools_of_one_name_leave_the_last_with_a_warning(
    override: list[object], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="deskwork.runtime"):
        offered, content = _run(
            Worker(name="w", tools=[search_web]), Job(input="go", tools_override=override)
        )
    assert offered == ["search"] and content == "docs: x"
    assert _warnings(caplog) == [
        "worker 'w': Job.tools_override gives different tools of the same name ('search'):"
        " the last entry of each name is the tool of this run, the others are not offered"
    ]


def test_the_same_tool_or_name_twice_is_one_entry_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    job = Job(input="go", tools_override=["search", search_web, "search", search_web])
    with caplog.at_level(logging.WARNING, logger="deskwork.runtime"):
        offered, content = _run(Worker(name="w", tools=[search_web]), job)
    assert offered == ["search"] and content == "web: x"
    assert _warnings(caplog) == []
