"""A supervised graph run through a Desk: the agents' and routers' events land in the run."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from deskwork import Desk, Job
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.llm import DeskworkChatModel
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.runner import GraphRunner
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
        return AgentResponse(agent_name=self.name, content="Hi there!", next_agent="supervisor")


def _graph(adapter: ScriptedAdapter) -> object:
    supervisor = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        DeskworkChatModel(adapter=adapter, model="scripted"),
        TOPOLOGY,
    )
    greeter = Greeter(AgentConfig(name="greeter", type="custom", description="Greets"))
    return build_hub_spoke_graph(supervisor, {"greeter": greeter}, TOPOLOGY)


async def test_agent_and_route_events_are_recorded_in_the_desk_run() -> None:
    adapter = ScriptedAdapter(["greeter", "FINISH: The user has been greeted."])
    desk = Desk(run_store=InMemoryRunStore(), adapter=adapter)
    report = await desk.arun(GraphRunner(_graph(adapter), name="helpdesk"), Job(input="Hello"))
    assert report.status == "completed", report.errors
    assert report.content == "The user has been greeted."
    stored = desk.run_store.get_events(report.run_id)
    agent_events = [(e.type, e.source) for e in stored if e.type.startswith("graph.agent.")]
    assert agent_events == [
        ("graph.agent.started", "supervisor"),
        ("graph.agent.completed", "supervisor"),
        ("graph.agent.started", "greeter"),
        ("graph.agent.completed", "greeter"),
        ("graph.agent.started", "supervisor"),
        ("graph.agent.completed", "supervisor"),
    ]
    decisions = [
        e.payload for e in stored if e.type == "graph.route" and e.payload["by"] == "supervisor"
    ]
    assert [(d["chosen"], d["fell_back"]) for d in decisions] == [("greeter", False), (None, False)]
    assert report.metrics["llm_calls"] == 2


async def test_supervisor_model_failure_fails_the_run_with_a_clear_error() -> None:
    adapter = ScriptedAdapter([])  # the model has nothing to say: every call fails
    desk = Desk(run_store=InMemoryRunStore(), adapter=adapter)
    report = await desk.arun(GraphRunner(_graph(adapter)), Job(input="Hello"))
    assert report.status == "failed"
    assert any("LLM call failed" in e for e in report.errors), report.errors
    stored = desk.run_store.get_events(report.run_id)
    failed = [e.payload for e in stored if e.type == "graph.agent.failed"]
    assert failed and failed[0]["agent_name"] == "supervisor"
    assert failed[0]["error_type"] == "LLMInvocationError"
