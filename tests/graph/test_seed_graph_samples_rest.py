"""The graph guide's samples no other test runs (``graphcrew`` read as ``deskwork.graph``).

The DevOps incident system of 1.5 as printed: its ``config.yaml``, the four agents of its
``agents.py`` and its FastAPI ``app.py``; the unit-test sample of 2.6; and the module map of
Part 2 (each package's "Files:" list and the names it puts in each file). The samples' code is
kept; what the guide leaves to the reader (the incident supervisor's knowledge files, the graph
``app.py`` never builds) is written here, and ``MockLLM`` stands in for a provider.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import structlog
from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

pytest.importorskip("langgraph")

from deskwork.graph import (
    AgentResponse,
    BaseAgent,
    OrchestratorConfig,
    OrchestratorState,
    TopologyResolver,
    load_config_from_string,
)
from deskwork.graph.config.schema import AgentConfig  # as the 2.6 sample imports it
from deskwork.graph.context.slots import SlotTier
from deskwork.graph.routing.graph_builder import build_topology_graph
from deskwork.graph.testing import MockLLM

# -- 1.5 File: config.yaml -------------------------------------------------------------------

CONFIG_YAML = """\
# config.yaml -- DevOps Incident Response System
agents:
  - name: supervisor
    type: supervisor
    description: >-
      Orchestrates the incident response workflow. Routes incoming alerts to
      the monitor for classification, then to diagnostician for root-cause
      analysis, remediator for fixes, and reporter for post-mortems.
    knowledge_enabled: true
  - name: monitor
    type: custom
    description: >-
      Detects and classifies incidents from raw alert payloads. Determines
      severity (P1-P4) and affected service.
  - name: diagnostician
    type: custom
    description: >-
      Analyzes classified incidents to determine root cause. Uses runbook
      knowledge modules for system-specific diagnostic procedures.
    knowledge_enabled: true
  - name: remediator
    type: custom
    description: >-
      Executes remediation playbooks based on diagnosis. Uses playbook
      knowledge modules for step-by-step remediation procedures.
    knowledge_enabled: true
  - name: reporter
    type: custom
    description: >-
      Generates structured incident reports and post-mortem documents.

topology:
  edges:
    - from_agent: supervisor
      to_agent: monitor
    - from_agent: supervisor
      to_agent: diagnostician
    - from_agent: supervisor
      to_agent: remediator
    - from_agent: supervisor
      to_agent: reporter
    - from_agent: monitor
      to_agent: diagnostician
    - from_agent: monitor
      to_agent: supervisor
    - from_agent: diagnostician
      to_agent: remediator
    - from_agent: diagnostician
      to_agent: supervisor
    - from_agent: remediator
      to_agent: reporter
    - from_agent: remediator
      to_agent: supervisor
    - from_agent: reporter
      to_agent: supervisor
  default_return: supervisor

context:
  shared_slots:
    max_tokens: 8192
  tiered_slots:
    turn:
      max_tokens: 4096
    session:
      max_tokens: 8192
    long_term:
      max_tokens: 4096
  eviction_strategy: lru

session:
  enabled: true

knowledge:
  enabled: true
  base_dir: knowledge
  max_total_tokens: 16384

retry:
  initial_interval: 1.0
  backoff_factor: 2.0
  max_interval: 30.0
  max_attempts: 3
  jitter: true

timeout:
  llm_call_seconds: 30.0
  total_request_seconds: 120.0
"""

# -- 1.5 File: agents.py ---------------------------------------------------------------------


class MonitorAgent(BaseAgent):
    """Classifies raw alerts into structured incidents."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        messages = state.get("messages", [])
        alert_text = str(messages[-1].content) if messages else "unknown alert"
        severity = "P2"
        service = "unknown"
        category = "infrastructure"
        if "cpu" in alert_text.lower() or "memory" in alert_text.lower():
            category = "resource_exhaustion"
            service = "compute"
        elif "latency" in alert_text.lower() or "timeout" in alert_text.lower():
            category = "performance"
            service = "api-gateway"
        elif "error rate" in alert_text.lower() or "5xx" in alert_text.lower():
            category = "availability"
            service = "web-service"
            severity = "P1"
        classification = {
            "severity": severity,
            "service": service,
            "category": category,
            "raw_alert": alert_text[:500],
        }
        return AgentResponse(
            agent_name=self.name,
            content=f"Incident classified: {severity} {category} on {service}",
            next_agent="diagnostician",
            slots_update={
                "incident_classification": json.dumps(classification),
                "incident_severity": severity,
                "incident_service": service,
            },
            slots_tier={
                "incident_severity": SlotTier.SESSION,
                "incident_service": SlotTier.SESSION,
            },
        )


class DiagnosticianAgent(BaseAgent):
    """Performs root-cause analysis using context from the monitor."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        slots = state.get("context_slots", {})
        classification_raw = slots.get("incident_classification", "{}")
        classification = json.loads(classification_raw) if isinstance(
            classification_raw, str
        ) else classification_raw  # fmt: skip
        category = classification.get("category", "unknown")
        service = classification.get("service", "unknown")
        root_cause = "unknown"
        recommended_action = "escalate"
        if category == "resource_exhaustion":
            root_cause = f"Resource limits exceeded on {service}"
            recommended_action = "scale_horizontally"
        elif category == "performance":
            root_cause = f"Latency degradation in {service}"
            recommended_action = "circuit_breaker_and_retry"
        elif category == "availability":
            root_cause = f"Service {service} returning errors due to deployment regression"
            recommended_action = "rollback_deployment"
        diagnosis = {
            "root_cause": root_cause,
            "recommended_action": recommended_action,
            "confidence": 0.85,
        }
        return AgentResponse(
            agent_name=self.name,
            content=f"Diagnosis: {root_cause}. Recommended: {recommended_action}",
            next_agent="remediator",
            slots_update={"incident_diagnosis": json.dumps(diagnosis)},
            slots_tier={"incident_diagnosis": SlotTier.SESSION},
        )


class RemediatorAgent(BaseAgent):
    """Executes remediation based on the diagnosis."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        slots = state.get("context_slots", {})
        diagnosis_raw = slots.get("incident_diagnosis", "{}")
        diagnosis = json.loads(diagnosis_raw) if isinstance(
            diagnosis_raw, str
        ) else diagnosis_raw  # fmt: skip
        recommended_action = diagnosis.get("recommended_action", "escalate")
        status = "completed"
        steps = ["Executed remediation steps"]
        remediation = {
            "action_taken": recommended_action,
            "steps": steps,
            "status": status,
        }
        return AgentResponse(
            agent_name=self.name,
            content=f"Remediation {status}: {recommended_action}",
            next_agent="reporter",
            slots_update={"incident_remediation": json.dumps(remediation)},
            slots_tier={"incident_remediation": SlotTier.SESSION},
        )


class ReporterAgent(BaseAgent):
    """Generates incident reports from the full incident context."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        slots = state.get("context_slots", {})
        classification = json.loads(slots.get("incident_classification", "{}"))
        diagnosis = json.loads(slots.get("incident_diagnosis", "{}"))
        remediation = json.loads(slots.get("incident_remediation", "{}"))
        report = f"""# Incident Report
**Severity:** {classification.get("severity", "P3")}
**Service:** {classification.get("service", "unknown")}
## Root Cause
{diagnosis.get("root_cause", "unknown")}
## Remediation
**Action:** {remediation.get("action_taken", "none")}
**Status:** {remediation.get("status", "unknown")}"""
        return AgentResponse(
            agent_name=self.name,
            content=report,
            next_agent=None,  # Terminates the graph
            slots_update={"incident_report": report},
            slots_tier={"incident_report": SlotTier.LONG_TERM},
        )


# -- the reader's part: the supervisor's knowledge folder, and the graph -----------------------

SUPERVISOR_REACT_CONFIG = """\
max_passes: 3
actions:
  decide:
    description: Route the incident to the next agent
    parameters:
      next_agent: The agent to route to
      content: What that agent should work on
    required:
      - next_agent
"""

REACT_CORE = """\
You coordinate incident response between {allowed_agents}.
What you remember: {injected_memories}
{available_actions}
"""


def _decide(next_agent: str, content: str) -> str:
    """A supervisor reply in the guide's ReAct format."""
    params = json.dumps({"next_agent": next_agent, "content": content})
    return f'<thought>A new alert.</thought><action type="decide">{params}</action>'


@pytest.fixture
def incident_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's folder: config.yaml and knowledge/supervisor/ (base_dir: knowledge)."""
    (tmp_path / "config.yaml").write_text(CONFIG_YAML)
    folder = tmp_path / "knowledge" / "supervisor"
    folder.mkdir(parents=True)
    (folder / "react_config.yaml").write_text(SUPERVISOR_REACT_CONFIG)
    (folder / "react_core.md").write_text(REACT_CORE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _workers(config: OrchestratorConfig) -> dict[str, BaseAgent]:
    cfg = {a.name: a for a in config.agents}
    return {
        "monitor": MonitorAgent(cfg["monitor"]),
        "diagnostician": DiagnosticianAgent(cfg["diagnostician"]),
        "remediator": RemediatorAgent(cfg["remediator"]),
        "reporter": ReporterAgent(cfg["reporter"]),
    }


def _incident_graph(
    config: OrchestratorConfig, llm: MockLLM, *, knowledge: bool = True, **supervisor_kwargs: Any
) -> Any:
    """The mesh graph of the five agents, entered at the supervisor."""
    from deskwork.graph import ReactTemplateManager, SupervisorAgent

    topology = TopologyResolver(config=config.topology)
    template_manager = None
    if knowledge:
        template_manager = ReactTemplateManager(
            "supervisor",
            config.knowledge.base_dir,
            max_loaded_tokens=config.knowledge.max_total_tokens,
        )
    supervisor = SupervisorAgent(
        config.agents[0],
        llm,
        topology,
        template_manager=template_manager,
        retry_config=config.retry,
        timeout_config=config.timeout,
        **supervisor_kwargs,
    )
    agents = {"supervisor": supervisor, **_workers(config)}
    return build_topology_graph(agents=agents, topology=topology, entry_point="supervisor")


# -- 1.5: the four agents on the mesh topology ---------------------------------------------------


@pytest.mark.parametrize(
    ("alert", "severity", "category", "service", "action"),
    [
        ("CPU at 98% on node-7", "P2", "resource_exhaustion", "compute", "scale_horizontally"),
        ("p99 latency over 2s", "P2", "performance", "api-gateway", "circuit_breaker_and_retry"),
        (
            "CRITICAL: 5xx error rate above 10% on web-service",
            "P1",
            "availability",
            "web-service",
            "rollback_deployment",
        ),
        ("disk replaced on rack 4", "P2", "infrastructure", "unknown", "escalate"),
    ],
)
async def test_incident_agents_classify_diagnose_remediate_and_report(
    alert: str, severity: str, category: str, service: str, action: str
) -> None:
    from deskwork.graph import create_initial_state

    config = load_config_from_string(CONFIG_YAML)
    topology = TopologyResolver(config=config.topology)
    # the alert goes straight to the monitor, which classifies the last message it sees
    graph = build_topology_graph(agents=_workers(config), topology=topology, entry_point="monitor")
    state = create_initial_state(alert, session_id="incident-1", user_id="ops-team")
    result = await graph.ainvoke(state)

    messages = result["messages"][1:]
    assert [m.name for m in messages] == ["monitor", "diagnostician", "remediator", "reporter"]
    assert messages[0].content == f"Incident classified: {severity} {category} on {service}"
    assert messages[2].content == f"Remediation completed: {action}"
    report = messages[-1].content
    assert report.startswith(f"# Incident Report\n**Severity:** {severity}\n")
    assert f"**Service:** {service}\n" in report and f"**Action:** {action}\n" in report
    assert result["current_agent"] == "reporter"  # next_agent=None: the graph ended there
    slots = result["context_slots"]
    assert json.loads(slots["incident_classification"])["raw_alert"] == alert
    assert slots["incident_report"] == report
    tiers = [m.response_metadata.get("slots_tier") for m in messages]
    assert tiers == [
        {"incident_severity": "session", "incident_service": "session"},
        {"incident_diagnosis": "session"},
        {"incident_remediation": "session"},
        {"incident_report": "long_term"},
    ]


async def test_incident_system_runs_from_its_supervisor_with_the_full_stack(
    incident_dir: Path,
) -> None:
    from deskwork.graph import (
        CircuitBreakerMiddleware,
        InMemoryMetricsCollector,
        InMemorySessionManager,
        Memory,
        MemoryInjectionMiddleware,
        MetricsMiddleware,
        OrchestratorContext,
        PerTenantRateLimiter,
        TenantIsolationMiddleware,
        create_initial_state,
        load_config,
    )

    config = load_config(Path("config.yaml"))
    sessions = InMemorySessionManager()
    await sessions.store_memory(
        "incident-2",
        Memory(session_id="incident-2", key="runbook", value="5xx spikes follow deploys"),
        user_id="ops-team",
    )
    collector = InMemoryMetricsCollector()
    limiter = PerTenantRateLimiter(max_concurrency=5, max_tenants=1000)
    alert = "CRITICAL: 5xx error rate above 10% on web-service"
    llm = MockLLM(responses=[_decide("monitor", alert)])
    graph = _incident_graph(
        config,
        llm,
        rate_limiter=limiter,
        middleware=[
            MetricsMiddleware(collector),
            TenantIsolationMiddleware(),
            CircuitBreakerMiddleware(failure_threshold=5, recovery_timeout_seconds=60),
            MemoryInjectionMiddleware(sessions, limit=5),
        ],
    )
    ctx = OrchestratorContext(session_manager=sessions, rate_limiter=limiter)
    async with ctx:
        limiter.set_tenant("ops-team")  # before the graph's LLM calls
        state = create_initial_state("5xx", session_id="incident-2", user_id="ops-team")
        result = await graph.ainvoke(state)
    assert ctx.is_closed
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        await limiter.acquire()  # the context closed it

    names = [m.name for m in result["messages"][1:]]
    assert names == ["supervisor", "monitor", "diagnostician", "remediator", "reporter"]
    # the monitor classified the supervisor's hand-over note, the last message it saw
    assert result["messages"][1].content == alert
    assert "**Action:** rollback_deployment" in result["messages"][-1].content
    assert [r.agent_name for r in collector.invocations] == ["supervisor"]
    prompt = "\n".join(str(m.content) for m in llm.calls[0])
    assert "5xx spikes follow deploys" in prompt  # the injected memory
    assert "decide: Route the incident to the next agent" in prompt  # the knowledge folder


# -- 1.5 File: app.py ------------------------------------------------------------------------

APP_PY = '''\
"""FastAPI application for the DevOps Incident Response System."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager
from pathlib import Path

import structlog
from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel

from deskwork.graph import (
    AgentConfig,
    CircuitBreakerOpenError,
    InMemoryMetricsCollector,
    OrchestratorContext,
    OrchestratorError,
    PerTenantRateLimiter,
    RateLimitExceededError,
    SupervisorAgent,
    TopologyResolver,
    clear_logging_context,
    create_initial_state,
    load_config,
)
from deskwork.graph.routing.graph_builder import build_topology_graph

structlog.configure(
    processors=[
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.dev.ConsoleRenderer(),
    ],
)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Manage OrchestratorContext lifecycle."""
    config = load_config(Path("config.yaml"))
    rate_limiter = PerTenantRateLimiter(max_concurrency=5, max_tenants=1000)
    ctx = OrchestratorContext(rate_limiter=rate_limiter)
    app.state.ctx = ctx
    yield
    await ctx.close()


app = FastAPI(
    title="DevOps Incident Response System",
    lifespan=lifespan,
)


@app.post("/incident")
async def create_incident(
    alert: str,
    x_user_id: str = Header(..., alias="X-User-Id"),
):
    clear_logging_context()
    session_id = f"incident-{uuid.uuid4()}"
    state = create_initial_state(alert, session_id=session_id, user_id=x_user_id)
    try:
        result = await app.state.graph.ainvoke(state)
        return {"incident_id": session_id, "report": result["messages"][-1].content}
    except RateLimitExceededError:
        raise HTTPException(status_code=429, detail="Rate limit exceeded")
    except CircuitBreakerOpenError:
        raise HTTPException(status_code=503, detail="Service temporarily unavailable")
    except OrchestratorError as exc:
        raise HTTPException(status_code=500, detail=str(exc))


@app.get("/health")
async def health():
    ctx = app.state.ctx
    return {"status": "ok" if not ctx.is_closed else "closed"}
'''


@pytest.fixture
def incident_app(incident_dir: Path) -> Iterator[ModuleType]:
    """app.py imported from the system's folder; structlog's setup is put back afterwards."""
    pytest.importorskip("fastapi")
    saved = structlog.get_config()
    path = incident_dir / "app.py"
    path.write_text(APP_PY)
    spec = importlib.util.spec_from_file_location("seed_incident_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        structlog.configure(**saved)


def test_incident_app_reports_and_maps_the_library_errors_to_http(
    incident_app: ModuleType,
) -> None:
    from fastapi.testclient import TestClient

    from deskwork.graph import CircuitBreakerMiddleware

    app = incident_app.app
    config = load_config_from_string(CONFIG_YAML)
    alert = "CRITICAL: 5xx error rate above 10% on web-service"
    user = {"X-User-Id": "ops-team"}
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "ok"}
        # the graph the sample leaves to the reader
        app.state.graph = _incident_graph(config, MockLLM(responses=[_decide("monitor", alert)]))
        reply = client.post("/incident", params={"alert": alert}, headers=user)
        assert reply.status_code == 200
        body = reply.json()
        assert body["incident_id"].startswith("incident-")
        assert "**Severity:** P1" in body["report"] and "rollback_deployment" in body["report"]
        assert client.post("/incident", params={"alert": alert}).status_code == 422  # no user

        # the handler never calls set_tenant(): the per-tenant limiter refuses the LLM call
        limiter = app.state.ctx.rate_limiter
        app.state.graph = _incident_graph(config, MockLLM(responses=["-"]), rate_limiter=limiter)
        reply = client.post("/incident", params={"alert": alert}, headers=user)
        assert (reply.status_code, reply.json()) == (429, {"detail": "Rate limit exceeded"})

        # knowledge_enabled without a ReactTemplateManager, then the opened circuit
        breaker = CircuitBreakerMiddleware(failure_threshold=1, recovery_timeout_seconds=60)
        app.state.graph = _incident_graph(
            config, MockLLM(responses=["-"]), knowledge=False, middleware=[breaker]
        )
        reply = client.post("/incident", params={"alert": alert}, headers=user)
        assert reply.status_code == 500
        assert reply.json()["detail"] == (
            "Supervisor 'supervisor' needs a ReactTemplateManager for ReAct mode"
        )
        reply = client.post("/incident", params={"alert": alert}, headers=user)
        assert (reply.status_code, reply.json()) == (
            503,
            {"detail": "Service temporarily unavailable"},
        )
    assert app.state.ctx.is_closed  # the lifespan closed the context, and its limiter
    assert repr(limiter).endswith(", closed)")


# -- 2.6 Writing a unit test (the sample, collected as a test class) -----------------------------


class TestAgentConfig:
    def test_valid_config(self) -> None:
        cfg = AgentConfig(name="supervisor", type="supervisor", description="Main")
        assert cfg.name == "supervisor"

    def test_missing_required_field_raises(self) -> None:
        with pytest.raises(ValidationError):
            AgentConfig(type="custom", description="No name")  # type: ignore[call-arg]

    @pytest.mark.parametrize(
        ("name", "match"),
        [
            ("", None),
            ("__end__", "reserved"),
            ("1agent", "invalid"),
        ],
        ids=["empty", "reserved-end", "digit-start"],
    )
    def test_invalid_names(self, name: str, match: str | None) -> None:
        with pytest.raises(ValidationError, match=match):
            AgentConfig(name=name, type="custom", description="desc")


# -- Part 2: each package's files and what the guide puts in them --------------------------------

MODULE_MAP: dict[str, list[str]] = {
    "config.schema": [
        "OrchestratorConfig", "AgentConfig", "TopologyConfig", "TopologyEdgeConfig",
        "ContextConfig", "SlotConfig", "TieredSlotConfig", "TierConfig", "SessionConfig",
        "KnowledgeConfig", "RetryConfig", "TimeoutConfig",
    ],
    "config.loader": [
        "load_config", "load_config_from_dict", "load_config_from_string", "ConfigLoadError",
        "ConfigValidationError",
    ],
    "config.defaults": ["get_default_config"],
    "core.state": ["OrchestratorState", "create_initial_state"],
    "core.types": ["AgentResponse"],
    "core.exceptions": ["OrchestratorError", "RoutingSelfLoopError", "CircuitBreakerOpenError"],
    "core.token_counting": ["TokenCounter", "CharDivisionTokenCounter"],
    "core.logging_context": ["bind_logging_context", "clear_logging_context"],
    "core.llm_utils": [
        "ainvoke_with_timeout", "astream_with_timeout", "build_async_retryer",
        "register_transient_exception", "deregister_transient_exception",
        "get_transient_exceptions", "TRANSIENT_EXCEPTIONS",
    ],
    "core.rate_limiting": ["RateLimiter", "SemaphoreRateLimiter", "PerTenantRateLimiter"],
    "core.orchestrator_context": ["OrchestratorContext"],
    "agents.base": ["BaseAgent"],
    "agents.middleware": ["AgentMiddleware"],
    "agents.supervisor": ["SupervisorAgent"],
    "agents.session_manager_agent": ["SessionManagerAgent"],
    "agents.metrics": ["MetricsCollector", "MetricsMiddleware", "InMemoryMetricsCollector"],
    "agents.tenant_isolation": ["TenantIsolationMiddleware"],
    "agents.circuit_breaker": ["CircuitBreakerMiddleware", "CircuitBreakerState"],
    "agents.memory_injection": ["MemoryInjectionMiddleware"],
    "context.slots": ["Slot", "SlotPool", "SlotTier", "TIER_ORDER"],
    "context.manager": ["SlotManager"],
    "context.eviction": [
        "EvictionStrategy", "LRUEviction", "FIFOEviction", "PriorityEviction", "DemotionEviction",
    ],
    "context.persistence": ["SlotPersistence", "InMemorySlotPersistence"],
    "session.models": ["SessionMessage", "Summary", "Memory", "PaginatedResult"],
    "session.interface": ["SessionManager"],
    "session.in_memory": ["InMemorySessionManager"],
    "session.semantic": ["SemanticSearchMixin"],
    "routing.topology": ["TopologyResolver"],
    "routing.graph_builder": [
        "build_hub_spoke_graph", "build_topology_graph", "build_conditional_edge",
    ],
    "knowledge.schema": [
        "ReactConfigSchema", "ReactSlotSchema", "ReactActionSchema", "DEFAULT_MAX_PASSES",
    ],
    "knowledge.models": ["KnowledgeSlotDef", "KnowledgeLoadResult"],
    "knowledge.loader": ["KnowledgeLoader", "FileSystemKnowledgeLoader"],
    "knowledge.template_manager": ["ReactTemplateManager"],
    "react.executor": ["ReactExecutor"],
    "react.models": [
        "ReactParsedResponse", "ReactStructuredResponse", "TerminalActionResult", "ActionHandler",
    ],
    "observability.otel": ["OTEL_AVAILABLE", "get_tracer", "otel_span", "sync_otel_span"],
    "observability.middleware": ["OpenTelemetryMiddleware"],
    "testing.mock_llm": ["MockLLM"],
    "testing.factories": ["make_test_state"],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(MODULE_MAP))
def test_each_documented_file_holds_what_the_guide_lists(module: str) -> None:
    found = importlib.import_module(f"deskwork.graph.{module}")
    assert [n for n in MODULE_MAP[module] if not hasattr(found, n)] == []


# 2.2 layer 8 and the Key Classes of 2.3: what a developer must write for each extension point
EXTENSION_POINTS = {
    "BaseAgent": {"process"},
    "SessionManager": {"save_messages", "get_messages", "clear_session"},
    "SlotPersistence": {
        "load_session_slots",
        "save_session_slots",
        "load_long_term_slots",
        "save_long_term_slots",
    },
    "EvictionStrategy": {"select"},
    "TokenCounter": {"count"},
    "RateLimiter": {"acquire"},  # release() and close() have no-op defaults
    "AgentMiddleware": set(),  # every hook has a concrete no-op default
    "SemanticSearchMixin": {"embed_text"},
    "KnowledgeLoader": {"load_module", "resolve_module_path"},
}


@pytest.mark.parametrize("name", sorted(EXTENSION_POINTS))
def test_each_extension_point_asks_for_the_documented_methods(name: str) -> None:
    import deskwork.graph

    base = getattr(deskwork.graph, name)
    assert set(getattr(base, "__abstractmethods__", ())) == EXTENSION_POINTS[name]
