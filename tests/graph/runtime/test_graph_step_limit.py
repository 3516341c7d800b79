"""A desk run of a graph that never ends fails after a bounded number of steps, not minutes later.

LangGraph 1.x raised its default step limit to about 10,000; a supervisor that keeps routing to a
worker (a model that always names the worker) then kept a desk run "running" for many minutes,
each step slower as the conversation grew. GraphRunner now uses DEFAULT_RECURSION_LIMIT (25)
unless the runner or the graph itself (``with_config``) says otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from deskwork import Desk, Job
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.exceptions import ConfigurationError
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.llm import DeskworkChatModel
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.runner import DEFAULT_RECURSION_LIMIT, GraphRunner
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter

TOPOLOGY = TopologyResolver(
    TopologyConfig(
        edges=[
            TopologyEdgeConfig(from_agent="supervisor", to_agent="greeter"),
            TopologyEdgeConfig(from_agent="greeter", to_agent="supervisor"),
        ]
    )
)


class Greeter(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        return AgentResponse(agent_name=self.name, content="Hi!", next_agent="supervisor")


def _looping_graph(adapter: ScriptedAdapter) -> Any:
    supervisor = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        DeskworkChatModel(adapter=adapter, model="scripted"),
        TOPOLOGY,
    )
    greeter = Greeter(AgentConfig(name="greeter", type="custom", description="Greets"))
    return build_hub_spoke_graph(supervisor, {"greeter": greeter}, TOPOLOGY)


async def _run(runner_graph: Any, adapter: ScriptedAdapter, **runner: Any) -> Any:
    desk = Desk(run_store=InMemoryRunStore(), adapter=adapter)
    try:
        report = await asyncio.wait_for(
            desk.arun(GraphRunner(runner_graph, **runner), Job(input="Hello")), 30
        )
        assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]
    finally:
        desk.close()
    return report


@pytest.mark.parametrize(
    ("configure", "runner", "limit"),
    [
        (lambda g: g, {}, DEFAULT_RECURSION_LIMIT),
        (lambda g: g.with_config(recursion_limit=40), {}, 40),
        (lambda g: g.with_config(recursion_limit=40), {"recursion_limit": 10}, 10),
    ],
    ids=["default", "the-graph's-own", "the-runner's"],
)
async def test_a_supervisor_that_always_routes_fails_at_the_step_limit(
    configure: Any, runner: dict[str, Any], limit: int
) -> None:
    adapter = ScriptedAdapter([], default="greeter")  # the model always names the worker
    report = await _run(configure(_looping_graph(adapter)), adapter, **runner)
    assert report.status == "failed"
    assert report.errors[0].startswith(f"GraphRecursionError: Recursion limit of {limit} reached")
    assert len(adapter.calls) == (limit + 1) // 2  # one supervisor call every other step


@pytest.mark.parametrize("limit", [0, -1, "25", 2.5, True])
def test_a_step_limit_that_is_not_a_positive_int_is_refused(limit: Any) -> None:
    with pytest.raises(ConfigurationError, match="recursion_limit must be a positive int"):
        GraphRunner(_looping_graph(ScriptedAdapter()), recursion_limit=limit)
