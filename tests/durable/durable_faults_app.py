"""A durable application for the fault tests: ``python durable_faults_app.py COMMAND``.

Its directory is ``$DURABLE_DIR``; side effects are counted in files there (one line per
call). Runners are registered at import, as a real application does.

Commands: ``stream RUN_ID`` (a streamed run that hangs in tool call 2), ``graph RUN_ID``
(a LangGraph graph whose model has its own adapter and whose LangChain tool 2 hangs),
``run RUN_ID`` (the plain crasher), ``recover``, ``cancel RUN_ID``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HERE = Path(os.environ.get("DURABLE_DIR", "."))


def _count(name: str) -> int:
    """Append one line to ``HERE/name``; the number of lines so far."""
    path = HERE / name
    with path.open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    return len(path.read_text().splitlines())


def _hang_once(name: str) -> None:
    """The first call hangs: the test kills the process then."""
    if _count(name) == 1:
        time.sleep(60)


@tool
def step_one() -> str:
    """The first side effect."""
    _count("step_one")
    return "one done"


@tool
def step_two() -> str:
    """The second side effect (hangs the first time)."""
    _hang_once("step_two")
    return "two done"


def _model(messages: list[dict[str, Any]], tools: Any) -> Any:
    """Answers from the conversation alone (a restarted process has no script position)."""
    _count("model_calls")
    done = sum(1 for m in messages if m.get("role") == "tool")
    return [call_tool("step_one"), call_tool("step_two"), reply("all done")][min(done, 2)]


desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=_model),
    storage_dir=HERE / ".deskwork",
    durable=True,
)
crasher = Worker(name="crasher", tools=[step_one, step_two])
desk.register(crasher)


def _graph_runner() -> Any:
    """A tool-calling graph: its model has an adapter of its own (not the desk's), and its
    tools are LangChain tools run by LangGraph's ToolNode."""
    from langchain_core.tools import tool as lc_tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from deskwork.graph import GraphRunner
    from deskwork.graph.llm import DeskworkChatModel

    @lc_tool
    def lc_one() -> str:
        """The graph's first side effect."""
        _count("lc_one")
        return "lc one done"

    @lc_tool
    def lc_two() -> str:
        """The graph's second side effect (hangs the first time)."""
        _hang_once("lc_two")
        return "lc two done"

    def own_model(messages: list[dict[str, Any]], tools: Any) -> Any:
        _count("own_model_calls")
        done = sum(1 for m in messages if m.get("role") == "tool")
        return [call_tool("lc_one"), call_tool("lc_two"), reply("graph done")][min(done, 2)]

    llm = DeskworkChatModel(model="own", adapter=ScriptedAdapter(default=own_model))
    bound = llm.bind_tools([lc_one, lc_two])

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([lc_one, lc_two]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return GraphRunner(builder.compile(), name="toolgraph")


if os.environ.get("WITH_GRAPH"):
    desk.register(_graph_runner())


def main(argv: list[str]) -> None:
    command = argv[0]
    if command == "stream":  # stream RUN_ID
        report = desk.run(crasher, "do both steps", run_id=argv[1], stream=True)
        print(json.dumps({"status": report.status}))
    elif command == "run":  # run RUN_ID
        report = desk.run(crasher, "do both steps", run_id=argv[1])
        print(json.dumps({"status": report.status, "errors": report.errors}))
    elif command == "graph":  # graph RUN_ID
        runner = desk.get_runner("graph", "toolgraph")
        assert runner is not None, "set WITH_GRAPH=1"
        report = desk.run(runner, "use both tools", run_id=argv[1])
        print(json.dumps({"status": report.status, "content": report.content}))
    elif command == "cancel":  # cancel RUN_ID
        desk.cancel(argv[1])
        print(json.dumps({"status": desk.result(argv[1], timeout=30).status}))
    elif command == "recover":
        reports = desk.recover()
        print(
            json.dumps(
                [{"run_id": r.run_id, "status": r.status, "content": r.content} for r in reports]
            )
        )
    desk.close()


if __name__ == "__main__":
    main(sys.argv[1:])
