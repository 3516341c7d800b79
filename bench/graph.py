"""Supervised-graph benchmark (issue: supervised graph orchestration).

Scenario: one agent hop per request: supervisor -> greeter -> supervisor -> end. Both
supervisor turns call a scripted zero-latency model (``DeskworkChatModel`` over
``ScriptedAdapter``), so the figures are orchestration cost, not model time. Measures, in the
same process:

- ``deskwork.graph`` (``SupervisorAgent`` + a ``BaseAgent`` worker wired by
  ``build_hub_spoke_graph``, default middleware) against the same work as bare LangGraph nodes
  (a plain supervisor function, a plain worker function, a conditional edge);
- the same ``deskwork.graph`` request run through a desk (``desk.arun(GraphRunner(graph))``:
  run record, events and checkpoints in an in-memory and in a SQLite run store);
- ``SlotManager``: writing 1,000 shared slots into a pool that holds about 100 (LRU eviction).

Run: ``python bench/graph.py`` (prints a markdown table; medians of several repeats).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph

from deskwork import Desk, Job
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import (
    AgentConfig,
    ContextConfig,
    SlotConfig,
    TopologyConfig,
    TopologyEdgeConfig,
)
from deskwork.graph.context.manager import SlotManager
from deskwork.graph.core.state import OrchestratorState, create_initial_state
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.llm import DeskworkChatModel
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.runner import GraphRunner
from deskwork.store import InMemoryRunStore
from deskwork.store.sqlite import SQLiteRunStore
from deskwork.testing import ScriptedAdapter

REPEATS = 7
REQUESTS = 50


def _model() -> DeskworkChatModel:
    """Routes to the greeter until the greeter has answered, then ends the turn."""

    def route(messages: list[dict[str, Any]], _tools: Any) -> str:
        return "All done." if messages[-1]["role"] == "assistant" else "greeter"

    return DeskworkChatModel(model="bench/scripted", adapter=ScriptedAdapter(default=route))


class Greeter(BaseAgent):
    async def process(self, state: OrchestratorState, config: Any = None) -> AgentResponse:
        return AgentResponse(agent_name=self.name, content="Hello!", next_agent="supervisor")


def deskwork_graph() -> Any:
    topology = TopologyResolver(
        config=TopologyConfig(
            edges=[
                TopologyEdgeConfig(from_agent="supervisor", to_agent="greeter"),
                TopologyEdgeConfig(from_agent="greeter", to_agent="supervisor"),
            ]
        )
    )
    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm=_model(),
        topology=topology,
    )
    greeter = Greeter(config=AgentConfig(name="greeter", type="custom", description="Greets"))
    return build_hub_spoke_graph(supervisor, {"greeter": greeter}, topology)


def bare_graph() -> Any:
    """The same work as plain LangGraph nodes."""
    llm = _model()

    async def supervisor(state: OrchestratorState) -> dict[str, Any]:
        reply = await llm.ainvoke(state["messages"])
        found = re.search(r"\bgreeter\b", str(reply.content))
        said = AIMessage(content=str(reply.content), name="supervisor")
        return {"messages": [said], "current_agent": "greeter" if found else "supervisor"}

    async def greeter(state: OrchestratorState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Hello!")], "current_agent": "supervisor"}

    builder = StateGraph(OrchestratorState)
    builder.add_node("supervisor", supervisor)
    builder.add_node("greeter", greeter)
    builder.add_edge(START, "supervisor")
    builder.add_conditional_edges(
        "supervisor", lambda s: "greeter" if s["current_agent"] == "greeter" else END
    )
    builder.add_edge("greeter", "supervisor")
    return builder.compile()


def _medians(variants: dict[str, Callable[[], Awaitable[Any]]], calls: int) -> dict[str, float]:
    """Seconds per request of each variant: rounds run every variant in turn (so load changes
    on a shared machine hit all of them alike); the median round counts."""

    async def batch(make: Callable[[], Awaitable[Any]]) -> float:
        started = time.perf_counter()
        for _ in range(calls):
            await make()
        return (time.perf_counter() - started) / calls

    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(REPEATS):
        for name, make in variants.items():
            gc.collect()
            samples[name].append(asyncio.run(batch(make)))
    return {name: statistics.median(values) for name, values in samples.items()}


def slot_manager_cost() -> float:
    """Seconds to write 1,000 slots into a pool that keeps about 100 of them."""

    def run() -> float:
        manager = SlotManager(config=ContextConfig(shared_slots=SlotConfig(max_tokens=1000)))
        started = time.perf_counter()
        for i in range(1000):
            manager.set_shared(f"slot{i}", "x" * 36)  # ~10 tokens each
        return time.perf_counter() - started

    return statistics.median(run() for _ in range(REPEATS))


def main() -> None:
    # agent logs are filtered out (INFO lines to a terminal would measure the terminal)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    graph, bare = deskwork_graph(), bare_graph()

    def state() -> Any:
        return create_initial_state("hi", session_id="s", user_id="u")

    result = asyncio.run(graph.ainvoke(state()))
    assert [m.content for m in result["messages"]][-2:] == ["Hello!", "All done."], result
    memory_desk = Desk(adapter=ScriptedAdapter(), run_store=InMemoryRunStore(max_runs=None))
    runner, at_exit = GraphRunner(graph), GraphRunner(graph, durability="exit")
    job = Job(input="hi", metadata={"session_id": "s", "user_id": "u"})
    report = asyncio.run(memory_desk.arun(runner, job))
    assert report.status == "completed", report.errors
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_desk = Desk(adapter=ScriptedAdapter(), run_store=SQLiteRunStore(Path(tmp) / "d.db"))
        found = _medians(
            {
                "plain": lambda: bare.ainvoke(state()),
                "direct": lambda: graph.ainvoke(state()),
                "in_desk": lambda: memory_desk.arun(runner, job),
                "exit_only": lambda: memory_desk.arun(at_exit, job),
                "on_disk": lambda: sqlite_desk.arun(runner, job),
            },
            REQUESTS,
        )
        sqlite_desk.run_store.close()
    plain, direct, in_desk = found["plain"], found["direct"], found["in_desk"]
    exit_only, on_disk = found["exit_only"], found["on_disk"]
    slots = slot_manager_cost()
    ms = 1000.0
    print("| measurement (median) | value |")
    print("|---|---|")
    print(f"| bare LangGraph, per agent hop | {plain * ms:.2f} ms |")
    print(f"| deskwork.graph (SupervisorAgent + BaseAgent), per hop | {direct * ms:.2f} ms |")
    print(f"| ratio deskwork.graph / bare LangGraph | {direct / plain:.2f}x |")
    print(f"| through the desk, in-memory store (checkpoints, events) | {in_desk * ms:.2f} ms |")
    print(f"| through the desk, in-memory, durability='exit' | {exit_only * ms:.2f} ms |")
    print(f"| through the desk, SQLite store | {on_disk * ms:.2f} ms |")
    print(f"| extra cost of the desk (in-memory / SQLite) | {(in_desk - direct) * ms:.2f} ms"
          f" / {(on_disk - direct) * ms:.2f} ms |")  # fmt: skip
    print(f"| SlotManager: 1,000 slot writes with LRU eviction | {slots * ms:.2f} ms |")


if __name__ == "__main__":
    main()
