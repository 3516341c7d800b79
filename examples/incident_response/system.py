"""Wiring of the DevOps Incident Response System: config -> agents -> mesh graph -> desk.

``build_system()`` reads ``config.yaml``, builds the five agents with the middleware stack and
their knowledge, and wires them into a topology graph. ``make_desk()`` makes the desk that runs
it: every incident is a stored run (SQLite under ``.deskwork/``) with its events.
``handle_incident()`` runs one alert and remembers it for the team's later incidents.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import (
    DIAGNOSTICIAN_ACTIONS,
    REMEDIATOR_ACTIONS,
    DiagnosticianAgent,
    MonitorAgent,
    RemediatorAgent,
    ReporterAgent,
)
from scripted import SCRIPTED_MODEL, scripted_adapter

from deskwork import Desk, Event, Job, Report
from deskwork.graph import (
    AgentMiddleware,
    CircuitBreakerMiddleware,
    DeskworkChatModel,
    GraphRunner,
    InMemoryMetricsCollector,
    InMemorySessionManager,
    Memory,
    MemoryInjectionMiddleware,
    MetricsMiddleware,
    OrchestratorConfig,
    OrchestratorContext,
    PerTenantRateLimiter,
    ReactExecutor,
    ReactTemplateManager,
    SupervisorAgent,
    TenantIsolationMiddleware,
    TopologyResolver,
    load_config,
)
from deskwork.graph.routing.graph_builder import build_topology_graph

EXAMPLE_DIR = Path(__file__).resolve().parent
CONFIG_PATH = EXAMPLE_DIR / "config.yaml"
DATA_DIR = EXAMPLE_DIR / ".deskwork"
RUNNER_NAME = "incident-response"


@dataclass
class IncidentSystem:
    """Everything one process needs to handle incidents."""

    config: OrchestratorConfig
    runner: GraphRunner
    sessions: InMemorySessionManager
    rate_limiter: PerTenantRateLimiter
    metrics: InMemoryMetricsCollector
    template_managers: list[ReactTemplateManager] = field(default_factory=list)

    def context(self) -> OrchestratorContext:
        """The lifecycle of the components: ``async with system.context(): ...``."""
        return OrchestratorContext(
            session_manager=self.sessions,
            template_managers=self.template_managers,
            rate_limiter=self.rate_limiter,
        )


def build_system(config_path: Path = CONFIG_PATH) -> IncidentSystem:
    """Build the agents and the mesh graph described by ``config_path``.

    The agents' model is a :class:`DeskworkChatModel` without a model of its own: it calls the
    model of the desk that runs the graph (scripted offline, or ``--model PROVIDER/MODEL``).
    """
    config = load_config(config_path)
    knowledge_dir = config_path.parent / config.knowledge.base_dir
    cfg = {agent.name: agent for agent in config.agents}
    llm = DeskworkChatModel(temperature=0)
    topology = TopologyResolver(config=config.topology)
    sessions = InMemorySessionManager()
    limiter = PerTenantRateLimiter(max_concurrency=5, max_tenants=1000)
    collector = InMemoryMetricsCollector()
    stack: list[AgentMiddleware] = [
        MetricsMiddleware(collector),
        TenantIsolationMiddleware(),
        CircuitBreakerMiddleware(failure_threshold=5, recovery_timeout_seconds=60),
    ]
    managers = {
        name: ReactTemplateManager(
            agent_name=name,
            base_dir=knowledge_dir,
            max_loaded_tokens=config.knowledge.max_total_tokens,
        )
        for name in ("supervisor", "diagnostician", "remediator")
    }

    def executor(name: str, actions: dict[str, Any]) -> ReactExecutor:
        return ReactExecutor(
            agent_name=name,
            llm=llm,
            template_manager=managers[name],
            action_handlers=actions,
            retry_config=config.retry,
            timeout_config=config.timeout,
            rate_limiter=limiter,
        )

    supervisor = SupervisorAgent(
        config=cfg["supervisor"],
        llm=llm,
        topology=topology,
        template_manager=managers["supervisor"],
        middleware=[*stack, MemoryInjectionMiddleware(sessions, limit=3)],
        rate_limiter=limiter,
        retry_config=config.retry,
        timeout_config=config.timeout,
        agent_descriptions={a.name: a.description for a in config.agents},
        redact_pii=True,
    )
    agents = {
        "supervisor": supervisor,
        "monitor": MonitorAgent(cfg["monitor"], middleware=stack, redact_pii=True),
        "diagnostician": DiagnosticianAgent(
            cfg["diagnostician"],
            react_executor=executor("diagnostician", DIAGNOSTICIAN_ACTIONS),
            middleware=stack,
            redact_pii=True,
        ),
        "remediator": RemediatorAgent(
            cfg["remediator"],
            react_executor=executor("remediator", REMEDIATOR_ACTIONS),
            middleware=stack,
            redact_pii=True,
        ),
        "reporter": ReporterAgent(cfg["reporter"], middleware=stack, redact_pii=True),
    }
    graph = build_topology_graph(agents=agents, topology=topology, entry_point="supervisor")
    return IncidentSystem(
        config=config,
        runner=GraphRunner(graph, name=RUNNER_NAME),
        sessions=sessions,
        rate_limiter=limiter,
        metrics=collector,
        template_managers=list(managers.values()),
    )


def make_desk(model: str | None = None, storage_dir: Path = DATA_DIR) -> Desk:
    """The desk: the scripted on-call model offline, else ``model`` through LiteLLM."""
    if model is None:
        return Desk(model=SCRIPTED_MODEL, adapter=scripted_adapter(), storage_dir=storage_dir)
    return Desk(model=model, temperature=0, storage_dir=storage_dir)


async def handle_incident(
    desk: Desk,
    system: IncidentSystem,
    alert: str,
    *,
    user_id: str,
    session_id: str | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> Report:
    """Run one alert through the graph as a desk run; remember it for the team's next ones.

    ``on_event`` receives each event of the run as it happens (the app streams them).
    """
    session_id = session_id or f"incident-{uuid.uuid4()}"
    system.rate_limiter.set_tenant(user_id)
    job = Job(input=alert, metadata={"session_id": session_id, "user_id": user_id})
    report = await desk.arun(system.runner, job, on_event=on_event)
    incident = incident_summary(report)
    if report.status == "completed" and incident.get("service"):
        await system.sessions.store_memory(
            session_id,
            Memory(
                session_id=session_id,
                user_id=user_id,
                key=f"incident:{incident['service']}",
                value=f"{alert[:200]} -> {incident.get('root_cause', 'unknown')}",
                importance=0.9 if incident.get("severity") == "P1" else 0.5,
                source_agent="reporter",
                categories=["incident"],
            ),
            user_id=user_id,
        )
    return report


def incident_summary(report: Report) -> dict[str, Any]:
    """Severity, service, root cause and action of a finished run (from its final slots)."""
    data = report.data if isinstance(report.data, dict) else {}
    slots = data.get("context_slots") or {}
    summary: dict[str, Any] = {}
    for key in ("incident_classification", "incident_diagnosis", "incident_remediation"):
        raw = slots.get(key)
        if isinstance(raw, str):
            summary.update(json.loads(raw))
    summary.pop("raw_alert", None)
    return summary
