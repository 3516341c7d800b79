"""On a durable desk a graph's own-adapter model calls and its LangChain tool calls are
steps: a recovered graph neither asks that model again nor re-runs a finished tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="the graph extra")

from durablekit import lines, open_store
from faultkit import kill_during, run_faults_app
from langchain_core.tools import tool as lc_tool

from deskwork import Desk
from deskwork.testing import ScriptedAdapter, call_tool, reply

RAN: list[str] = []


@lc_tool
def ping(host: str) -> str:
    """Ping a host."""
    RAN.append(host)
    return f"{host} is up"


def _graph(own: ScriptedAdapter) -> Any:
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from deskwork.graph.llm import DeskworkChatModel

    bound = DeskworkChatModel(model="own", adapter=own).bind_tools([ping])

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([ping]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


@pytest.mark.parametrize("durable", [True, False])
def test_own_model_and_langchain_tool_calls_are_steps_of_a_durable_run(
    tmp_path: Path, durable: bool
) -> None:
    from dbos import DBOS

    RAN.clear()
    own = ScriptedAdapter([call_tool("ping", host="db1"), reply("db1 is up")])
    desk_adapter = ScriptedAdapter()  # the graph never uses the desk's model
    desk = Desk(model="m", adapter=desk_adapter, storage_dir=tmp_path, durable=durable)
    try:
        report = desk.run(_graph(own), "is db1 up?", run_id="g-1")
        steps = [s["function_name"] for s in DBOS.list_workflow_steps("g-1")] if durable else []
        again = ping.invoke({"host": "db2"})  # outside a run: a plain call
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "db1 is up"), report.errors
    assert RAN == ["db1", "db2"] and again == "db2 is up"
    assert len(own.calls) == 2 and desk_adapter.calls == []
    if durable:
        kinds = [name.split(":")[0] + ":" + name.split(":")[1] for name in steps]
        assert kinds == ["deskwork.model:own", "deskwork.tool:ping", "deskwork.model:own"]
        assert steps[1].split(":")[2], "the step names the tool call id"


def test_a_recovered_graph_does_not_call_its_model_or_finished_tools_again(
    tmp_path: Path,
) -> None:
    kill_during(tmp_path, "lc_two", "graph", "g-2", WITH_GRAPH="1")
    assert len(lines(tmp_path / "lc_one")) == 1
    assert len(lines(tmp_path / "own_model_calls")) == 2

    reports = run_faults_app(tmp_path, "recover", WITH_GRAPH="1")

    assert reports == [{"run_id": "g-2", "status": "completed", "content": "graph done"}]
    assert len(lines(tmp_path / "lc_one")) == 1  # finished: not run again
    assert len(lines(tmp_path / "lc_two")) == 2  # interrupted: ran again, once
    assert len(lines(tmp_path / "own_model_calls")) == 3  # two recorded answers, one new
    store = open_store(tmp_path, {})
    try:
        types = [e.type for e in store.get_events("g-2")]
    finally:
        store.close()
    assert types.count("run.started") == 1 and types.count("run.recovered") == 1
    assert types.count("llm.completed") == 3
    assert types[-1] == "run.completed"


class _Socketish:
    """A result that does not pickle."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()


@lc_tool(response_format="content_and_artifact")
def connect(host: str) -> tuple[str, Any]:
    """Returns a text and a live object (its artifact)."""
    RAN.append(host)
    return f"connected to {host}", _Socketish()


def test_a_langchain_tool_artifact_that_does_not_pickle_fails_clearly(tmp_path: Path) -> None:
    """The call's result cannot be checkpointed: the graph fails with the reason, after one
    call (nothing is recorded that a replay could not give back)."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    RAN.clear()

    async def ask(state: MessagesState) -> dict[str, Any]:
        call = {"name": "connect", "args": {"host": "db1"}, "id": "c1", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_node("tools", ToolNode([connect]))
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "tools")
    desk = Desk(model="m", adapter=ScriptedAdapter(), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(builder.compile(), "connect", run_id="g-3")
    finally:
        desk.close()
    assert RAN == ["db1"]
    assert report.status == "failed"
    assert any("cannot be checkpointed" in error for error in report.errors), report.errors
