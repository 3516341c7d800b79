"""The seed's examples, end to end: YAML config -> agents -> graph builder -> a real run."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.runnables import RunnableConfig

from deskwork.graph import (
    AgentResponse,
    BaseAgent,
    CircuitBreakerMiddleware,
    InMemoryMetricsCollector,
    InMemorySessionManager,
    Memory,
    MemoryInjectionMiddleware,
    MetricsMiddleware,
    OrchestratorState,
    SlotTier,
    SupervisorAgent,
    TenantIsolationMiddleware,
    TopologyResolver,
    create_initial_state,
    load_config_from_string,
)
from deskwork.graph._events import graph_emitter
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph, build_topology_graph
from deskwork.graph.testing import MockLLM

MINIMAL = """
agents:
  - name: supervisor
    type: supervisor
    description: Routes user requests to the appropriate agent
  - name: greeter
    type: custom
    description: Greets users and tracks greeting count
topology:
  edges:
    - from_agent: supervisor
      to_agent: greeter
    - from_agent: greeter
      to_agent: supervisor
  default_return: supervisor
context:
  shared_slots:
    max_tokens: 4096
  eviction_strategy: lru
session:
  enabled: false
"""


class GreeterAgent(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        count = state.get("context_slots", {}).get("greeting_count", 0) + 1
        last_msg = state["messages"][-1].content if state["messages"] else ""
        return AgentResponse(
            agent_name=self.name,
            content=f"Hello! This is greeting #{count}. You said: {last_msg}",
            next_agent="supervisor",
            slots_update={"greeting_count": count},
        )


async def test_minimal_example_runs() -> None:
    config = load_config_from_string(MINIMAL)
    topology = TopologyResolver(config=config.topology)
    agent_configs = {a.name: a for a in config.agents}
    llm = MockLLM(responses=["greeter", "FINISH: Greeted the user."])
    supervisor = SupervisorAgent(config=agent_configs["supervisor"], llm=llm, topology=topology)
    greeter = GreeterAgent(config=agent_configs["greeter"])
    graph = build_hub_spoke_graph(supervisor, {"greeter": greeter}, topology)

    state = create_initial_state("Hello!", session_id="s1", user_id="alice")
    result = await graph.ainvoke(state)

    assert result["messages"][-1].content == "Greeted the user."
    greeting = result["messages"][2].content
    assert greeting == "Hello! This is greeting #1. You said: Routing to greeter."
    assert result["context_slots"] == {"greeting_count": 1}
    assert topology.validate([a.name for a in config.agents]) == []


INCIDENT = """
agents:
  - {name: supervisor, type: supervisor, description: Orchestrates incident response}
  - {name: monitor, type: custom, description: Classifies alerts}
  - {name: diagnostician, type: custom, description: Finds root causes}
  - {name: reporter, type: custom, description: Writes reports}
topology:
  edges:
    - {from_agent: supervisor, to_agent: monitor}
    - {from_agent: supervisor, to_agent: reporter}
    - {from_agent: monitor, to_agent: diagnostician}
    - {from_agent: monitor, to_agent: supervisor}
    - {from_agent: diagnostician, to_agent: supervisor}
    - {from_agent: reporter, to_agent: supervisor}
  default_return: supervisor
"""


class MonitorAgent(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        alert = str(state["messages"][0].content)
        severity = "P1" if "5xx" in alert else "P3"
        return AgentResponse(
            agent_name=self.name,
            content=f"Incident classified: {severity}",
            next_agent="diagnostician",
            slots_update={"incident": json.dumps({"severity": severity})},
            slots_tier={"incident": SlotTier.SESSION},
        )


class DiagnosticianAgent(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        incident = json.loads(state["context_slots"]["incident"])
        return AgentResponse(
            agent_name=self.name,
            content=f"Root cause for {incident['severity']}: bad deploy",
            next_agent="supervisor",
            slots_update={"diagnosis": "rollback"},
        )


class ReporterAgent(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        slots = state["context_slots"]
        return AgentResponse(
            agent_name=self.name,
            content=f"# Incident Report\nAction: {slots['diagnosis']}",
            next_agent=None,  # terminates the graph
        )


async def test_mesh_incident_flow_with_the_full_middleware_stack() -> None:
    config = load_config_from_string(INCIDENT)
    topology = TopologyResolver(config=config.topology)
    cfg = {a.name: a for a in config.agents}
    collector = InMemoryMetricsCollector()
    sessions = InMemorySessionManager()
    await sessions.store_memory(
        "incident-1",
        Memory(
            session_id="incident-1", key="runbook", value="On a 5xx error rate spike, roll back"
        ),
    )
    stack: list[Any] = [
        MetricsMiddleware(collector),
        TenantIsolationMiddleware(),
        CircuitBreakerMiddleware(failure_threshold=3, recovery_timeout_seconds=1),
    ]
    supervisor = SupervisorAgent(
        cfg["supervisor"],
        MockLLM(responses=["monitor", "reporter"]),
        topology,
        middleware=[*stack, MemoryInjectionMiddleware(sessions, limit=3)],
    )
    graph = build_topology_graph(
        agents={
            "supervisor": supervisor,
            "monitor": MonitorAgent(cfg["monitor"], middleware=stack),
            "diagnostician": DiagnosticianAgent(cfg["diagnostician"], middleware=stack),
            "reporter": ReporterAgent(cfg["reporter"], middleware=stack),
        },
        topology=topology,
        entry_point="supervisor",
    )
    events: list[tuple[str, str, dict[str, Any]]] = []
    # InMemorySessionManager matches the whole query as a substring
    state = create_initial_state("5xx error rate", session_id="incident-1", user_id="ops")
    with graph_emitter(lambda t, s, p: events.append((t, s, p))):
        result = await graph.ainvoke(state)

    path = [m.name for m in result["messages"][1:]]
    assert path == ["supervisor", "monitor", "diagnostician", "supervisor", "reporter"]
    assert result["messages"][-1].content.startswith("# Incident Report\nAction: rollback")
    assert result["current_agent"] == "reporter"
    assert [r.agent_name for r in collector.invocations] == path
    assert collector.errors == []
    # the supervisor saw the recalled runbook memory in its prompt
    assert "roll back" in str(supervisor.llm.calls[0][0].content)  # type: ignore[attr-defined]
    completed = [s for t, s, _ in events if t == "graph.agent.completed"]
    assert completed == path
