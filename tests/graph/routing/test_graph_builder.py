"""Graph builders: graphs that really run with MockLLM-driven supervisors and scripted workers."""

from __future__ import annotations

from typing import Any, NotRequired

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from structlog.testing import capture_logs

from deskwork.graph._events import graph_emitter
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.circuit_breaker import CircuitBreakerMiddleware
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.exceptions import (
    AgentProcessError,
    CircuitBreakerOpenError,
    ConfigurationError,
)
from deskwork.graph.core.state import OrchestratorState, create_initial_state
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.routing.graph_builder import (
    build_conditional_edge,
    build_hub_spoke_graph,
    build_topology_graph,
)
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.testing import MockLLM

Events = list[tuple[str, str, dict[str, Any]]]


def resolver(*edges: tuple[str, str], default_return: str = "supervisor") -> TopologyResolver:
    return TopologyResolver(
        TopologyConfig(
            edges=[TopologyEdgeConfig(from_agent=a, to_agent=b) for a, b in edges],
            default_return=default_return,
        )
    )


HUB = resolver(
    ("supervisor", "greeter"),
    ("supervisor", "researcher"),
    ("greeter", "supervisor"),
    ("researcher", "supervisor"),
)
MESH = resolver(
    ("supervisor", "billing"),
    ("supervisor", "support"),
    ("billing", "support"),
    ("billing", "supervisor"),
    ("support", "supervisor"),
)


class Worker(BaseAgent):
    """Replies ``"<name> done"``, counts its turns in a slot and routes to ``route``."""

    def __init__(self, name: str, route: str | None = "supervisor", middleware: Any = None) -> None:
        super().__init__(
            AgentConfig(name=name, type="custom", description=f"{name} worker"),
            middleware=middleware,
        )
        self.route = route

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        count = state.get("context_slots", {}).get(f"{self.name}_turns", 0) + 1
        return AgentResponse(
            agent_name=self.name,
            content=f"{self.name} done",
            next_agent=self.route,
            slots_update={f"{self.name}_turns": count},
        )


def make_supervisor(*replies: str, topology: TopologyResolver = HUB) -> SupervisorAgent:
    return SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        MockLLM(responses=list(replies)),
        topology,
    )


def speakers(result: dict[str, Any]) -> list[str]:
    return [m.name or m.type for m in result["messages"]]


def recorder() -> tuple[Events, Any]:
    events: Events = []
    return events, lambda t, s, p: events.append((t, s, p))


class TestConditionalEdge:
    def state(self, current: str) -> OrchestratorState:
        return create_initial_state("x", current_agent=current)

    def test_end_when_the_agent_terminated(self) -> None:
        route = build_conditional_edge(HUB, "greeter")
        assert route(self.state("greeter")) == END

    def test_allowed_target_is_followed(self) -> None:
        assert build_conditional_edge(MESH, "billing")(self.state("support")) == "support"

    def test_disallowed_or_empty_target_falls_back_to_default_return(self) -> None:
        route = build_conditional_edge(MESH, "support")
        events, emit = recorder()
        with graph_emitter(emit):
            assert route(self.state("billing")) == "supervisor"
            assert route(self.state("")) == "supervisor"
        assert [p for _, _, p in events] == [
            {
                "from": "support",
                "requested": "billing",
                "chosen": "supervisor",
                "fell_back": True,
                "by": "edge",
            },
            {
                "from": "support",
                "requested": "",
                "chosen": "supervisor",
                "fell_back": True,
                "by": "edge",
            },
        ]

    def test_fallback_that_would_loop_to_itself_ends_instead(self) -> None:
        route = build_conditional_edge(HUB, "supervisor")
        assert route(self.state("nobody")) == END


class TestHubSpoke:
    async def test_supervisor_routes_worker_returns_supervisor_finishes(self) -> None:
        supervisor = make_supervisor("greeter", "FINISH: All greeted.")
        graph = build_hub_spoke_graph(
            supervisor, {"greeter": Worker("greeter"), "researcher": Worker("researcher")}, HUB
        )
        result = await graph.ainvoke(create_initial_state("Hello!", session_id="s1"))
        assert speakers(result) == ["human", "supervisor", "greeter", "supervisor"]
        assert result["messages"][-1].content == "All greeted."
        assert result["context_slots"] == {"greeter_turns": 1}
        assert result["current_agent"] == "supervisor"

    async def test_workers_always_return_to_the_supervisor(self) -> None:
        # the worker says "terminate", but in hub-spoke control goes back to the hub
        supervisor = make_supervisor("researcher", "FINISH: ok")
        graph = build_hub_spoke_graph(supervisor, {"researcher": Worker("researcher", None)}, HUB)
        result = await graph.ainvoke(create_initial_state("q"))
        assert speakers(result) == ["human", "supervisor", "researcher", "supervisor"]

    async def test_supervisor_that_never_routes_validly_ends_the_turn(self) -> None:
        supervisor = make_supervisor("banana split please")
        graph = build_hub_spoke_graph(supervisor, {"greeter": Worker("greeter")}, HUB)
        events, emit = recorder()
        with graph_emitter(emit):
            result = await graph.ainvoke(create_initial_state("q"))
        assert speakers(result) == ["human", "supervisor"]
        route_events = [p for t, _, p in events if t == "graph.route"]
        assert route_events[0]["fell_back"] is True
        assert route_events[0]["chosen"] is None

    async def test_topology_target_without_a_node_is_not_followed(self) -> None:
        # the topology allows "researcher" but the graph has no such node
        supervisor = make_supervisor("researcher")
        graph = build_hub_spoke_graph(supervisor, {"greeter": Worker("greeter")}, HUB)
        result = await graph.ainvoke(create_initial_state("q"))
        assert speakers(result) == ["human", "supervisor"]

    async def test_runnable_config_reaches_every_agent(self) -> None:
        # LangGraph hands each node its RunnableConfig (callbacks, metadata); the agents put the
        # step and node into the message metadata for correlation
        supervisor = make_supervisor("greeter", "FINISH: bye")
        graph = build_hub_spoke_graph(supervisor, {"greeter": Worker("greeter")}, HUB)
        result = await graph.ainvoke(
            create_initial_state("hi"), {"metadata": {"tenant": "acme"}, "tags": ["t1"]}
        )
        metas = [m.response_metadata for m in result["messages"][1:]]
        assert [m["langgraph_node"] for m in metas] == ["supervisor", "greeter", "supervisor"]
        assert [m["langgraph_step"] for m in metas] == [1, 2, 3]

    async def test_graph_events_trace_the_run(self) -> None:
        supervisor = make_supervisor("greeter", "FINISH: bye")
        graph = build_hub_spoke_graph(supervisor, {"greeter": Worker("greeter")}, HUB)
        events, emit = recorder()
        with graph_emitter(emit):
            await graph.ainvoke(create_initial_state("hi"))
        trace = [(t, s) for t, s, _ in events if t != "graph.route" or s == "supervisor"]
        assert trace == [
            ("graph.agent.started", "supervisor"),
            ("graph.route", "supervisor"),
            ("graph.agent.completed", "supervisor"),
            ("graph.route", "supervisor"),  # the edge out of the supervisor
            ("graph.agent.started", "greeter"),
            ("graph.agent.completed", "greeter"),
            ("graph.agent.started", "supervisor"),
            ("graph.route", "supervisor"),
            ("graph.agent.completed", "supervisor"),
        ]
        completed = [p for t, s, p in events if t == "graph.agent.completed"]
        assert [p["next_agent"] for p in completed] == ["greeter", "supervisor", None]

    async def test_failing_middleware_fails_the_graph_run(self) -> None:
        class Exploding(AgentMiddleware):
            async def before_invoke(self, agent_name: str, state: Any, config: Any = None) -> Any:
                raise RuntimeError("hook broke")

        supervisor = make_supervisor("greeter")
        worker = Worker("greeter", middleware=[Exploding()])
        graph = build_hub_spoke_graph(supervisor, {"greeter": worker}, HUB)
        events, emit = recorder()
        with graph_emitter(emit), pytest.raises(AgentProcessError, match="hook broke"):
            await graph.ainvoke(create_initial_state("q"))
        assert ("graph.middleware.failed", "greeter") in [(t, s) for t, s, _ in events]
        assert ("graph.agent.failed", "greeter") in [(t, s) for t, s, _ in events]

    async def test_open_circuit_breaker_stops_the_graph(self) -> None:
        breaker = CircuitBreakerMiddleware(failure_threshold=1, recovery_timeout_seconds=60)

        class Flaky(Worker):
            async def process(self, state: Any, config: Any = None) -> AgentResponse:
                raise OSError("backend down")

        # an earlier failure through the same (shared) breaker opens the circuit
        with pytest.raises(AgentProcessError):
            await Flaky("greeter", middleware=[breaker]).invoke(create_initial_state("q"))
        worker = Worker("greeter", middleware=[breaker])
        graph = build_hub_spoke_graph(make_supervisor("greeter"), {"greeter": worker}, HUB)
        events, emit = recorder()
        with graph_emitter(emit), pytest.raises(CircuitBreakerOpenError):
            await graph.ainvoke(create_initial_state("q"))
        failed = [p for t, _, p in events if t == "graph.agent.failed"]
        assert failed[0]["error_type"] == "CircuitBreakerOpenError"


class TestTopologyGraph:
    def agents(self, billing_route: str | None = "support") -> dict[str, BaseAgent]:
        return {
            "supervisor": make_supervisor("billing", "FINISH: resolved", topology=MESH),
            "billing": Worker("billing", billing_route),
            "support": Worker("support", "supervisor"),
        }

    async def test_workers_hand_off_directly_along_mesh_edges(self) -> None:
        graph = build_topology_graph(self.agents(), MESH, entry_point="supervisor")
        result = await graph.ainvoke(create_initial_state("refund?"))
        assert speakers(result) == ["human", "supervisor", "billing", "support", "supervisor"]
        assert result["context_slots"] == {"billing_turns": 1, "support_turns": 1}

    async def test_worker_that_terminates_ends_the_graph(self) -> None:
        graph = build_topology_graph(
            self.agents(billing_route=None), MESH, entry_point="supervisor"
        )
        result = await graph.ainvoke(create_initial_state("refund?"))
        assert speakers(result) == ["human", "supervisor", "billing"]
        assert result["current_agent"] == "billing"

    async def test_route_outside_the_topology_falls_back_to_default_return(self) -> None:
        agents = self.agents()
        agents["support"] = Worker("support", "billing")  # support -> billing is no edge
        graph = build_topology_graph(agents, MESH, entry_point="supervisor")
        events, emit = recorder()
        with graph_emitter(emit):
            result = await graph.ainvoke(create_initial_state("refund?"))
        assert speakers(result) == ["human", "supervisor", "billing", "support", "supervisor"]
        fallback = [p for t, s, p in events if t == "graph.route" and s == "support"]
        assert fallback == [
            {
                "from": "support",
                "requested": "billing",
                "chosen": "supervisor",
                "fell_back": True,
                "by": "edge",
            }
        ]

    async def test_entry_point_can_be_any_agent(self) -> None:
        graph = build_topology_graph(
            {"billing": Worker("billing", None)}, MESH, entry_point="billing"
        )
        result = await graph.ainvoke(create_initial_state("x", current_agent="billing"))
        assert speakers(result) == ["human", "billing"]

    async def test_custom_state_schema(self) -> None:
        class TicketState(OrchestratorState):
            ticket_id: NotRequired[str]

        graph = build_topology_graph(
            {"billing": Worker("billing", None)},
            MESH,
            entry_point="billing",
            state_schema=TicketState,
        )
        state: dict[str, Any] = {**create_initial_state("x"), "ticket_id": "T-1"}
        result = await graph.ainvoke(state)
        assert result["ticket_id"] == "T-1"


def test_inconsistent_topology_is_logged_at_build_time() -> None:
    # "researcher" is in the topology but not in the graph; "orphan" has no inbound edge
    with capture_logs() as logs:
        build_hub_spoke_graph(
            make_supervisor(), {"greeter": Worker("greeter"), "orphan": Worker("orphan")}, HUB
        )
    warnings = [e["warning"] for e in logs if e["event"] == "topology_warning"]
    assert any("unknown agent 'researcher'" in w for w in warnings)
    assert any("'orphan' is unreachable" in w for w in warnings)


class TestBuilderErrors:
    def test_unknown_entry_point(self) -> None:
        with pytest.raises(ConfigurationError, match="entry_point 'nobody'"):
            build_topology_graph({"billing": Worker("billing")}, MESH, entry_point="nobody")

    def test_node_name_must_match_agent_name(self) -> None:
        with pytest.raises(ConfigurationError, match="names must match"):
            build_hub_spoke_graph(make_supervisor(), {"hello": Worker("greeter")}, HUB)

    def test_no_agents(self) -> None:
        with pytest.raises(ConfigurationError, match="at least one agent"):
            build_topology_graph({}, MESH, entry_point="supervisor")

    def test_supervisor_must_not_be_a_spoke(self) -> None:
        supervisor = make_supervisor()
        with pytest.raises(ConfigurationError, match="supervisor"):
            build_hub_spoke_graph(supervisor, {"supervisor": supervisor}, HUB)
