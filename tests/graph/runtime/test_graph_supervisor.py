"""A supervisor graph (SupervisorAgent + build_hub_spoke_graph) run through the desk."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from deskwork import Desk, Job
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.middleware import AgentMiddleware
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
from deskwork.testing.scripted import Turn

SECRET = "hunter2-very-secret"
USAGE = {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}


class Greeter(BaseAgent):
    async def process(self, state: OrchestratorState, config: Any = None) -> AgentResponse:
        count = state.get("context_slots", {}).get("greeting_count", 0) + 1
        if state["messages"][0].content == "explode":
            raise RuntimeError("greeter exploded")
        return AgentResponse(
            agent_name=self.name,
            content=f"Hello! This is greeting #{count}.",
            next_agent="supervisor",
            slots_update={"greeting_count": count},
        )


class BrokenAudit(AgentMiddleware):
    async def after_invoke(
        self, agent_name: str, state: OrchestratorState, response: AgentResponse, config: Any = None
    ) -> AgentResponse:
        raise ValueError(f"audit log unavailable (password={SECRET})")


def _graph(middleware: list[AgentMiddleware] | None = None) -> Any:
    topology = TopologyResolver(
        config=TopologyConfig(
            edges=[
                TopologyEdgeConfig(from_agent="supervisor", to_agent="greeter"),
                TopologyEdgeConfig(from_agent="greeter", to_agent="supervisor"),
            ]
        )
    )
    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes requests"),
        llm=DeskworkChatModel(),  # the desk's adapter and model
        topology=topology,
    )
    greeter = Greeter(
        config=AgentConfig(name="greeter", type="custom", description="Greets"),
        middleware=middleware,
    )
    return build_hub_spoke_graph(supervisor, {"greeter": greeter}, topology)


def _desk() -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(
        [Turn(content="greeter", usage=USAGE), Turn(content="Nothing left to do.", usage=USAGE)]
    )
    return Desk(model="test/router", adapter=adapter, run_store=InMemoryRunStore()), adapter


def test_supervisor_graph_events_land_in_the_run_store_in_order() -> None:
    desk, adapter = _desk()
    job = Job(input="Hello!", metadata={"session_id": "s1", "user_id": "alice"})
    report = desk.run(GraphRunner(_graph(), name="hub"), job)
    assert report.status == "completed", report.errors
    assert report.content == "Nothing left to do."
    assert any(m.content == "Hello! This is greeting #1." for m in report.messages)
    assert report.data["context_slots"] == {"greeting_count": 1}
    assert adapter.remaining == 0 and adapter.calls[0]["model"] == "test/router"
    stored = desk.run_store.get_events(report.run_id)
    agents = [
        (e.type, e.payload["agent_name"]) for e in stored if e.type.startswith("graph.agent.")
    ]
    assert agents == [
        ("graph.agent.started", "supervisor"),
        ("graph.agent.completed", "supervisor"),
        ("graph.agent.started", "greeter"),
        ("graph.agent.completed", "greeter"),
        ("graph.agent.started", "supervisor"),
        ("graph.agent.completed", "supervisor"),
    ]
    routes = [e.payload["chosen"] for e in stored if e.type == "graph.route"]
    assert routes[0] == "greeter"
    order = [e.type for e in stored]
    first_route = order.index("graph.route")
    assert order.index("llm.completed") < first_route < order.index("graph.agent.completed")
    assert report.metrics["llm_calls"] == 2 and report.metrics["total_tokens"] == 44


def test_a_failing_agent_gives_a_failed_report_with_its_event() -> None:
    desk, _ = _desk()
    report = desk.run(GraphRunner(_graph()), "explode")
    assert report.status == "failed"
    assert "greeter exploded" in report.errors[0]
    stored = desk.run_store.get_events(report.run_id)
    failed = [e for e in stored if e.type == "graph.agent.failed"]
    assert failed[0].payload["agent_name"] == "greeter"
    assert [e.type for e in stored][-1] == "run.failed"


def test_a_failing_middleware_is_an_event_and_fails_the_run_without_leaking_secrets() -> None:
    desk, _ = _desk()
    report = desk.run(GraphRunner(_graph([BrokenAudit()])), "hi")
    assert report.status == "failed"
    assert "audit log unavailable" in report.errors[0] and SECRET not in report.errors[0]
    stored = desk.run_store.get_events(report.run_id)
    (failure,) = [e for e in stored if e.type == "graph.middleware.failed"]
    assert failure.payload["middleware"] == "BrokenAudit"
    assert failure.payload["hook"] == "after_invoke"
    assert SECRET not in str([e.payload for e in stored])
    kinds = [e.type for e in stored]
    assert kinds.index("graph.middleware.failed") < kinds.index("graph.agent.failed")


class Approver(BaseAgent):
    async def process(self, state: OrchestratorState, config: Any = None) -> AgentResponse:
        answer = interrupt({"prompt": "Send the greeting?"})
        return AgentResponse(agent_name=self.name, content=f"approved: {answer}")


def test_interrupt_inside_an_agent_pauses_and_resumes_the_desk_run() -> None:
    agent = Approver(AgentConfig(name="approver", type="custom", description="Asks first"))
    builder = StateGraph(OrchestratorState)
    builder.add_node("approver", agent.invoke)
    builder.add_edge(START, "approver")
    builder.add_edge("approver", END)
    runner = GraphRunner(builder.compile())
    desk, _ = _desk()
    paused = desk.run(runner, "hi")
    assert paused.status == "paused", paused.errors
    assert paused.pending_action is not None
    assert paused.pending_action.prompt == "Send the greeting?"
    done = desk.resume(paused.run_id, "yes", runner=runner)
    assert done.status == "completed" and done.content == "approved: yes"
