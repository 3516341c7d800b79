"""The graph guide's Part 1 code samples, run as written (``graphcrew`` read as ``deskwork.graph``).

Each test keeps the sample's code; where a sample uses the reader's own objects (an ``llm``,
``my_embedder``, a ``slot_handler``) the test defines a minimal one first, and where a sample
shows a result in a comment the test asserts it. A real provider (``ChatOpenAI``) is replaced
by ``MockLLM``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
import structlog
import structlog.testing
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

pytest.importorskip("langgraph")

from deskwork.graph import (
    AgentConfig,
    AgentResponse,
    BaseAgent,
    OrchestratorState,
    SlotTier,
)
from deskwork.graph.testing import MockLLM

# -- 1.2 Minimal example --------------------------------------------------------------------

MINIMAL_CONFIG = """\
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

AGENT_PY = """\
from deskwork.graph import AgentResponse, BaseAgent, OrchestratorState
from langchain_core.runnables import RunnableConfig


class GreeterAgent(BaseAgent):
    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        count = state.get("context_slots", {}).get("greeting_count", 0) + 1
        last_msg = state["messages"][-1].content if state["messages"] else ""
        content = f"Hello! This is greeting #{count}. You said: {last_msg}"
        return AgentResponse(
            agent_name=self.name,
            content=content,
            next_agent="supervisor",
            slots_update={"greeting_count": count},
        )
"""

# the sample's main.py; only the ChatOpenAI lines differ (a scripted model, no provider)
MAIN_PY = """\
import asyncio
from deskwork.graph.testing import MockLLM
from deskwork.graph import (
    AgentConfig,
    SupervisorAgent,
    TopologyResolver,
    create_initial_state,
    load_config,
)
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from agent import GreeterAgent


async def main():
    config = load_config("config.yaml")
    llm = MockLLM(responses=["greeter", "FINISH: Greeted you."])
    topology = TopologyResolver(config=config.topology)
    agent_configs = {a.name: a for a in config.agents}
    supervisor = SupervisorAgent(
        config=agent_configs["supervisor"],
        llm=llm,
        topology=topology,
    )
    greeter = GreeterAgent(config=agent_configs["greeter"])
    graph = build_hub_spoke_graph(supervisor, {"greeter": greeter}, topology)
    state = create_initial_state("Hello!", session_id="s1", user_id="alice")
    result = await graph.ainvoke(state)
    print(result["messages"][-1].content)
    print(result["messages"][2].content)


asyncio.run(main())
"""


def test_minimal_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.yaml").write_text(MINIMAL_CONFIG)
    (tmp_path / "agent.py").write_text(AGENT_PY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "agent", raising=False)
    exec(compile(MAIN_PY, str(tmp_path / "main.py"), "exec"), {"__name__": "__main__"})
    final, greeting = capsys.readouterr().out.splitlines()[-2:]  # after structlog's lines
    assert final == "Greeted you."
    # the greeter answered the last message it saw: the supervisor's routing note
    assert greeting == "Hello! This is greeting #1. You said: Routing to greeter."


# -- 1.3 Core concepts -----------------------------------------------------------------------


def test_core_concepts_state_topology_and_response() -> None:
    from deskwork.graph import TopologyResolver, create_initial_state, load_config_from_string

    state = create_initial_state(
        "Hello!",
        session_id="s1",  # default: "default"
        user_id="alice",  # default: "anonymous"
        current_agent="supervisor",  # default: "supervisor"
    )
    assert (state["session_id"], state["user_id"], state["current_agent"]) == (
        "s1",
        "alice",
        "supervisor",
    )
    assert len(state["request_id"]) == 36  # a UUID4
    defaults = create_initial_state("Hi")
    assert (defaults["session_id"], defaults["user_id"]) == ("default", "anonymous")

    config = load_config_from_string(MINIMAL_CONFIG)
    topology = TopologyResolver(config=config.topology)
    assert topology.is_allowed("supervisor", "greeter") is True
    assert topology.get_allowed_targets("supervisor") == ["greeter", "supervisor"]
    assert topology.validate(["supervisor", "greeter"]) == []
    assert topology.validate(["supervisor", "greeter", "loner"]) != []

    response = AgentResponse(agent_name="a", content="x")
    assert response.next_agent is None and response.slots_update == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        response.content = "y"  # type: ignore[misc]


# -- 1.4 #1 Declarative YAML configuration -----------------------------------------------------

COMPLETE_CONFIG = """\
agents:
  - name: supervisor
    type: supervisor
    description: Routes requests to the right agent
    model: gpt-4o                   # optional LLM model override
    knowledge_enabled: true         # enable knowledge module system
  - name: researcher
    type: custom
    description: Performs research tasks

topology:
  edges:
    - from_agent: supervisor
      to_agent: researcher
    - from_agent: researcher
      to_agent: supervisor
  default_return: supervisor

context:
  shared_slots:
    max_tokens: 4096                # token budget for the slot pool (must be > 0)
  tiered_slots:
    turn:
      max_tokens: 4096
    session:
      max_tokens: 4096
    long_term:
      max_tokens: 4096
  eviction_strategy: lru            # lru | fifo | priority | demotion

session:
  enabled: true

knowledge:
  enabled: true
  base_dir: llm_resources           # root directory for agent knowledge folders
  max_total_tokens: 8192            # token budget for loaded knowledge (must be > 0)

retry:
  initial_interval: 0.5             # seconds before first retry (must be > 0)
  backoff_factor: 2.0               # exponential base multiplier
  max_interval: 128.0               # maximum seconds between retries
  max_attempts: 3                   # total attempts including first (1 = no retry)
  jitter: true                      # random jitter to prevent thundering herd

timeout:
  llm_call_seconds: 30.0            # per-call LLM timeout
  file_io_seconds: 5.0              # per-file knowledge load timeout
  persistence_seconds: 10.0         # per-call slot persistence timeout
  total_request_seconds: 120.0      # total timeout across all ReAct passes
"""


def test_config_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deskwork.graph import (
        ConfigValidationError,
        load_config,
        load_config_from_dict,
        load_config_from_string,
    )

    (tmp_path / "config.yaml").write_text(COMPLETE_CONFIG)
    monkeypatch.chdir(tmp_path)
    yaml_str = COMPLETE_CONFIG

    # From a file (accepts str or Path)
    config = load_config("config.yaml")
    assert load_config(Path("config.yaml")) == config
    # From a YAML string
    config = load_config_from_string(yaml_str)
    # From a dict
    config = load_config_from_dict(
        {
            "agents": [
                {"name": "supervisor", "type": "supervisor", "description": "Routes"},
                {"name": "researcher", "type": "custom", "description": "Researches"},
            ],
            "topology": {"edges": [{"from_agent": "supervisor", "to_agent": "researcher"}]},
        }
    )
    assert [a.name for a in config.agents] == ["supervisor", "researcher"]

    full = load_config_from_string(yaml_str)
    assert full.agents[0].model == "gpt-4o" and full.agents[0].knowledge_enabled
    assert (full.knowledge.base_dir, full.knowledge.max_total_tokens) == ("llm_resources", 8192)
    assert full.timeout.total_request_seconds == 120.0 and full.retry.max_attempts == 3
    # frozen=True, extra="forbid": a typo fails at load time
    with pytest.raises(ConfigValidationError, match="eviction_strateg"):
        load_config_from_string(yaml_str.replace("eviction_strategy", "eviction_strategey"))
    # cross-validation: every topology edge names a defined agent
    with pytest.raises(ConfigValidationError, match="ghost"):
        load_config_from_string(yaml_str.replace("to_agent: researcher", "to_agent: ghost"))


# -- 1.4 #2 Custom agents ------------------------------------------------------------------------


class SummarizerAgent(BaseAgent):
    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        messages = state["messages"]
        # Your summarization logic here
        summary = f"Summarized {len(messages)} messages."
        return AgentResponse(
            agent_name=self.name,
            content=summary,
            next_agent=None,  # None = terminate, graph ends
            slots_update={"last_summary": summary},
            slots_tier={"last_summary": SlotTier.SESSION},
        )


async def test_custom_agent() -> None:
    from deskwork.graph.testing import make_test_state

    # Instantiate with a config
    agent = SummarizerAgent(
        config=AgentConfig(name="summarizer", type="custom", description="Summarizes conversations")
    )
    update = await agent.invoke(make_test_state("Hello"))
    assert update["messages"][0].content == "Summarized 1 messages."
    assert update["context_slots"] == {"last_summary": "Summarized 1 messages."}
    assert update["current_agent"] == "summarizer"  # terminated: its own name

    for bad in ("", "1abc", "has space", "__end__", "__start__", "a" * 65):
        with pytest.raises(ValidationError):
            AgentConfig(name=bad, type="custom", description="x")
    assert AgentConfig(name="a-b_9", type="custom", description="x").name == "a-b_9"


# -- 1.4 #3-5, #29 Supervisor routing, hub-spoke and mesh topologies, graph builders ------------

HUB_SPOKE = """\
topology:
  edges:
    - from_agent: supervisor
      to_agent: greeter
    - from_agent: supervisor
      to_agent: researcher
    - from_agent: greeter
      to_agent: supervisor
    - from_agent: researcher
      to_agent: supervisor
  default_return: supervisor
"""

MESH = """\
topology:
  edges:
    - from_agent: supervisor
      to_agent: billing
    - from_agent: supervisor
      to_agent: support
    - from_agent: billing
      to_agent: support          # direct worker-to-worker
    - from_agent: support
      to_agent: supervisor
    - from_agent: billing
      to_agent: supervisor
  default_return: supervisor
"""


class _Worker(BaseAgent):
    """The reader's worker agents: answer and hand over to ``then``."""

    def __init__(self, name: str, then: str | None) -> None:
        super().__init__(AgentConfig(name=name, type="custom", description=f"The {name} agent"))
        self.then = then

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        return AgentResponse(
            agent_name=self.name, content=f"{self.name} done", next_agent=self.then
        )


def _topology(yaml_text: str, *agents: str) -> Any:
    from deskwork.graph import TopologyResolver, load_config_from_string

    listed = "".join(f"  - {{name: {a}, type: custom, description: {a}}}\n" for a in agents)
    config = load_config_from_string(
        "agents:\n  - {name: supervisor, type: supervisor, description: routes}\n"
        + listed
        + yaml_text
    )
    return TopologyResolver(config=config.topology)


async def test_supervisor_routing_with_all_options() -> None:
    from deskwork.graph import (
        AgentConfig,
        InMemoryMetricsCollector,
        MetricsMiddleware,
        RetryConfig,
        RoutingSelfLoopError,
        SemaphoreRateLimiter,
        SupervisorAgent,
        TimeoutConfig,
    )
    from deskwork.graph.testing import make_test_state

    topology = _topology(HUB_SPOKE, "greeter", "researcher")
    llm = MockLLM(structured_responses=[{"next_agent": "researcher", "content": "Research it."}])

    collector = InMemoryMetricsCollector()
    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes requests"),
        llm=llm,
        topology=topology,
        retry_config=RetryConfig(max_attempts=3),
        timeout_config=TimeoutConfig(llm_call_seconds=30.0),
        rate_limiter=SemaphoreRateLimiter(max_concurrency=5),
        use_structured_output=True,
        middleware=[MetricsMiddleware(collector)],
        redact_pii=True,
    )
    update = await supervisor.invoke(make_test_state("Find papers on graphs"))
    assert update["current_agent"] == "researcher"
    assert [r.agent_name for r in collector.invocations] == ["supervisor"]

    looping = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm=MockLLM(responses=["supervisor"]),
        topology=topology,
    )
    with pytest.raises(RoutingSelfLoopError):
        await looping.process(make_test_state("Hello"))


async def test_hub_spoke_and_mesh_graphs_and_manual_wiring() -> None:
    from langgraph.graph import END, StateGraph

    from deskwork.graph import AgentConfig, SupervisorAgent, create_initial_state
    from deskwork.graph.routing.graph_builder import (
        build_conditional_edge,
        build_hub_spoke_graph,
        build_topology_graph,
    )

    topology = _topology(HUB_SPOKE, "greeter", "researcher")
    supervisor = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        MockLLM(responses=["greeter", "FINISH: all done"]),
        topology,
    )
    greeter, researcher = _Worker("greeter", "supervisor"), _Worker("researcher", "supervisor")
    graph = build_hub_spoke_graph(
        supervisor=supervisor,
        agents={"greeter": greeter, "researcher": researcher},
        topology=topology,
    )
    result = await graph.ainvoke(create_initial_state("Hello"))
    assert [m.content for m in result["messages"][1:]] == [
        "Routing to greeter.",
        "greeter done",
        "all done",
    ]

    mesh = _topology(MESH, "billing", "support")
    supervisor = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        MockLLM(responses=["billing", "FINISH: resolved"]),
        mesh,
    )
    billing, support = _Worker("billing", "support"), _Worker("support", "supervisor")
    graph = build_topology_graph(
        agents={
            "supervisor": supervisor,
            "billing": billing,
            "support": support,
        },
        topology=mesh,
        entry_point="supervisor",
    )
    result = await graph.ainvoke(create_initial_state("Refund my order"))
    names = [m.name for m in result["messages"][1:]]
    assert names == ["supervisor", "billing", "support", "supervisor"]  # billing -> support direct

    routing_fn = build_conditional_edge(mesh, "supervisor")
    # Returns END when state["current_agent"] == "supervisor" (termination sentinel)
    assert routing_fn(create_initial_state("x", current_agent="supervisor")) == END
    assert routing_fn(create_initial_state("x", current_agent="billing")) == "billing"
    # Falls back to topology.default_return for unknown targets
    from_billing = build_conditional_edge(mesh, "billing")
    assert from_billing(create_initial_state("x", current_agent="nowhere")) == "supervisor"
    assert from_billing(create_initial_state("x", current_agent="")) == "supervisor"

    # Manual edge wiring (the reader's builder and edge map)
    builder = StateGraph(OrchestratorState)
    builder.add_node("supervisor", supervisor.invoke)
    builder.add_node("billing", _Worker("billing", None).invoke)
    builder.add_node("support", _Worker("support", None).invoke)
    builder.set_entry_point("supervisor")
    edge_map: dict[Hashable, str] = {
        "billing": "billing",
        "support": "support",
        "supervisor": "supervisor",
        END: END,
    }
    builder.add_conditional_edges("supervisor", routing_fn, edge_map)
    supervisor.llm = MockLLM(responses=["support"])
    result = await builder.compile().ainvoke(create_initial_state("Help"))
    assert result["messages"][-1].content == "support done"


# -- 1.4 #6-8 Context slots, eviction, slot persistence -----------------------------------------


async def test_context_slots() -> None:
    from deskwork.graph import ContextConfig, SlotManager, SlotTier

    manager = SlotManager(config=ContextConfig())

    # Shared slots (default tier: TURN)
    manager.set_shared("user_name", "Alice")
    manager.set_shared_tiered("preference", "dark_mode", tier=SlotTier.SESSION)

    # Per-agent slots
    manager.set_agent("researcher", "search_query", "quantum computing")

    # Promote a slot to a higher tier
    manager.promote_slot("user_name", SlotTier.LONG_TERM)

    # Serialization
    data = manager.to_dict()  # {"shared": {...}, "agents": {...}}
    assert set(data) == {"shared", "agents"}
    restored = SlotManager(config=ContextConfig())
    restored.from_dict(data)  # Restore from dict
    assert restored.to_dict() == data

    # Lifecycle
    async with SlotManager(config=ContextConfig()) as mgr:
        mgr.set_shared("key", "value")

    # 1.7: the legacy bare-value format still loads (as TURN slots)
    legacy = SlotManager(config=ContextConfig())
    legacy.from_dict({"shared": {"theme": "dark"}, "agents": {}})
    assert legacy.to_dict()["shared"]["theme"]["tier"] == SlotTier.TURN
    assert operator.eq(SlotTier.TURN, "turn")  # a StrEnum


def test_eviction_strategies() -> None:
    from deskwork.graph import EvictionStrategy, Slot, SlotPool, load_config_from_string

    class CustomEviction(EvictionStrategy):
        def select(self, slots: list[Slot], count: int) -> list[Slot]:
            # Return up to `count` slots to evict
            return sorted(slots, key=lambda s: s.priority)[:count]

    pool = SlotPool(max_tokens=10, eviction_strategy=CustomEviction())
    pool.add("keep", "a" * 16, priority=9)
    pool.add("drop", "b" * 16, priority=1)
    pool.add("new", "c" * 16, priority=5)  # over budget: the lowest priority goes
    assert "drop" not in pool and "keep" in pool and "new" in pool

    for name in ("lru", "fifo", "priority", "demotion"):
        config = load_config_from_string(
            "agents: [{name: supervisor, type: supervisor, description: x}]\n"
            f"context:\n  eviction_strategy: {name}  # or lru, fifo, priority\n"
        )
        assert config.context.eviction_strategy == name


async def test_slot_persistence() -> None:
    from deskwork.graph import (
        ContextConfig,
        InMemorySlotPersistence,
        Slot,
        SlotManager,
        SlotPersistence,
    )

    class PostgresSlotPersistence(SlotPersistence):
        async def load_session_slots(self, session_id: str) -> list[Slot]: ...  # type: ignore[empty-body]
        async def save_session_slots(self, session_id: str, slots: list[Slot]) -> None: ...
        async def delete_session_slots(self, session_id: str) -> None: ...
        async def load_long_term_slots(self, user_id: str) -> list[Slot]: ...  # type: ignore[empty-body]
        async def save_long_term_slots(self, user_id: str, slots: list[Slot]) -> None: ...
        async def delete_long_term_slots(self, user_id: str) -> None: ...

    assert await PostgresSlotPersistence().health_check() == {"status": "ok"}

    persistence = InMemorySlotPersistence()
    manager = SlotManager(config=ContextConfig(), persistence=persistence)
    await manager.hydrate(session_id="s1", user_id="alice")
    # ... run your graph ...
    manager.set_shared_tiered("draft", "v1", tier=SlotTier.SESSION)
    manager.set_shared_tiered("language", "en", tier=SlotTier.LONG_TERM)
    manager.set_shared("scratch", "x")
    await manager.flush(session_id="s1", user_id="alice")
    await manager.clear_turn_slots()
    assert await persistence.health_check() == {
        "status": "ok",
        "session_slots": 1,
        "long_term_slots": 1,
    }

    later = SlotManager(config=ContextConfig(), persistence=persistence)
    await later.hydrate(session_id="s1", user_id="alice")
    shared = later.to_dict()["shared"]
    assert {k: v["value"] for k, v in shared.items()} == {"draft": "v1", "language": "en"}


# -- 1.4 #9-10, #19 Knowledge modules, the ReAct engine, structured output ----------------------

REACT_CONFIG = """\
max_passes: 5
actions:
  request_slot:
    description: Load a knowledge slot for reference
    parameters:
      slot: Name of the slot to load
    required:
      - slot
  decide:
    description: Make a final routing decision
    parameters:
      next_agent: The agent to route to
      content: Summary of reasoning
    required:
      - next_agent
slots:
  routing_rules:
    description: Rules for routing requests to agents
    modules:
      - slots/routing_rules.md
    triggers: When deciding which agent should handle the request
    max_tokens: 2000
  escalation_policy:
    description: Escalation rules
    modules:
      - slots/escalation_policy.md
    dependencies:
      - routing_rules
"""


@pytest.fixture
def llm_resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The guide's directory structure, in the working directory."""
    root = tmp_path / "llm_resources"
    (root / "supervisor" / "slots").mkdir(parents=True)
    (root / "supervisor" / "react_config.yaml").write_text(REACT_CONFIG)
    (root / "supervisor" / "react_core.md").write_text("You route requests for {agent_name}.")
    (root / "supervisor" / "slots" / "routing_rules.md").write_text("Billing goes to billing.")
    (root / "supervisor" / "slots" / "escalation_policy.md").write_text("Escalate P1 at once.")
    monkeypatch.chdir(tmp_path)
    return root


def test_knowledge_modules(llm_resources: Path) -> None:
    from deskwork.graph import (
        FileSystemKnowledgeLoader,
        KnowledgeConfigValidationError,
        ReactTemplateManager,
    )

    loader = FileSystemKnowledgeLoader(base_dir="llm_resources")
    manager = ReactTemplateManager(agent_name="supervisor", base_dir="llm_resources", loader=loader)
    assert sorted(manager.actions) == ["decide", "request_slot"]
    assert manager.resolve_dependencies("escalation_policy") == ["routing_rules"]

    cyclic = REACT_CONFIG.replace(
        "    triggers: When deciding",
        "    dependencies: [escalation_policy]\n    triggers: When deciding",
    )
    (llm_resources / "supervisor" / "react_config.yaml").write_text(cyclic)
    with pytest.raises(KnowledgeConfigValidationError, match="circular slot dependency"):
        ReactTemplateManager(agent_name="supervisor", base_dir="llm_resources", loader=loader)


async def test_react_execution_engine(llm_resources: Path) -> None:
    from deskwork.graph import (
        FileSystemKnowledgeLoader,
        ReactExecutor,
        ReactTemplateManager,
        RetryConfig,
        SemaphoreRateLimiter,
        TerminalActionResult,
        TimeoutConfig,
    )

    # the reader's own objects
    llm = MockLLM(
        responses=[
            "<thought>Rules first.</thought>"
            '<action type="request_slot">{"slot": "escalation_policy"}</action>',
            "<thought>Billing.</thought>"
            '<action type="decide">{"next_agent": "billing", "content": "refund"}</action>',
        ],
        usage_tokens={"input_tokens": 10, "output_tokens": 5},
    )
    limiter = SemaphoreRateLimiter(max_concurrency=2)
    config: RunnableConfig = {"tags": ["sample"]}
    handled: list[str] = []

    async def slot_handler(
        params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
    ) -> tuple[str, dict[str, Any]]:
        handled.append(params["slot"])
        result = await template_manager.load_slot(params["slot"])
        return f"Loaded {params['slot']}", {"last_slot": result.slot_name}

    async def decide_handler(
        params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
    ) -> tuple[str, dict[str, Any]]:
        raise TerminalActionResult(dict(params))

    loader = FileSystemKnowledgeLoader(base_dir="llm_resources")
    template_manager = ReactTemplateManager(
        agent_name="supervisor",
        base_dir="llm_resources",
        loader=loader,
        max_loaded_tokens=8192,
    )
    executor = ReactExecutor(
        agent_name="supervisor",
        llm=llm,
        template_manager=template_manager,
        action_handlers={"request_slot": slot_handler, "decide": decide_handler},
        max_passes=5,
        retry_config=RetryConfig(max_attempts=3),
        timeout_config=TimeoutConfig(llm_call_seconds=30.0, total_request_seconds=120.0),
        max_history_tokens=2000,
        rate_limiter=limiter,
        use_structured_output=True,
    )
    result = await executor.execute(user_input="Hello", context={"key": "value"}, config=config)
    assert (result["next_agent"], result["content"]) == ("billing", "refund")
    assert result["_token_usage"] == {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    assert handled == ["escalation_policy"]
    assert template_manager.loaded_slots == ("routing_rules", "escalation_policy")
    assert executor.structured_output_supported is False  # MockLLM without structured replies
    assert "Rules first." in str(llm.calls[1][1].content)  # the history reached pass 2


async def test_react_structured_output_and_reserved_keys(llm_resources: Path) -> None:
    from deskwork.graph import (
        ReactExecutor,
        ReactStructuredResponse,
        ReactTemplateManager,
        ReservedStateKeyError,
    )
    from deskwork.graph.agents._react_handlers import decide_handler

    template_manager = ReactTemplateManager(agent_name="supervisor", base_dir="llm_resources")
    handlers = {"decide": decide_handler}
    llm = MockLLM(
        structured_responses=[
            ReactStructuredResponse(
                thought="done", action="decide", action_params={"next_agent": "support"}
            )
        ]
    )

    executor = ReactExecutor(
        agent_name="supervisor",
        llm=llm,
        template_manager=template_manager,
        action_handlers=handlers,
        use_structured_output=True,
    )
    result = await executor.execute("Help")
    assert result["next_agent"] == "support"
    assert executor.structured_output_supported is True
    with pytest.raises(ReservedStateKeyError):
        await executor.execute("Help", context={"_observations": []})
    cancel = asyncio.Event()
    cancel.set()
    from deskwork.graph import ReactCancellationError

    with pytest.raises(ReactCancellationError):
        await executor.execute("Help", cancel_event=cancel)


# -- 1.4 #11, #24, #26 Sessions, health checks, semantic search ----------------------------------


async def test_session_management() -> None:
    from deskwork.graph import InMemorySessionManager, Memory, SessionMessage, Summary

    assert Summary is not None
    session_mgr = InMemorySessionManager()

    # Save messages
    await session_mgr.save_messages("s1", [
        SessionMessage(role="user", content="Hello", session_id="s1", user_id="alice"),
    ])  # fmt: skip

    # Get messages (limit must be >= 1)
    messages = await session_mgr.get_messages("s1", limit=50, user_id="alice")
    assert [m.content for m in messages] == ["Hello"]
    with pytest.raises(ValueError):
        await session_mgr.get_messages("s1", limit=0)

    # Store and recall memories
    await session_mgr.store_memory("s1", Memory(
        session_id="s1", key="preference", value="dark mode",
        importance=0.8, user_id="alice",
    ), user_id="alice")  # fmt: skip
    memory = await session_mgr.recall_memory("s1", "preference")
    assert memory is not None and memory.value == "dark mode"

    # Search memories (sorted by importance descending, expired memories excluded)
    results = await session_mgr.search_memories("s1", "preference", limit=5)
    assert [m.key for m in results] == ["preference"]

    # Cross-session search by user
    results = await session_mgr.search_memories_by_user("alice", "preference", limit=10)
    assert [m.key for m in results] == ["preference"]

    # Pagination
    page = await session_mgr.get_messages_paginated("s1", cursor=None, limit=20)
    # page.items, page.next_cursor, page.has_more
    assert (len(page.items), page.has_more) == (1, False)

    # Update memory (only content fields)
    updated = await session_mgr.update_memory("s1", memory.id, {"importance": 0.9}, user_id="alice")
    assert updated is not None and updated.importance == 0.9

    # Delete memory (with ownership check)
    assert not await session_mgr.delete_memory("s1", memory.id, user_id="mallory")
    deleted = await session_mgr.delete_memory("s1", memory.id, user_id="alice")
    assert deleted

    caps = session_mgr.get_capabilities()
    # InMemorySessionManager returns all 13 methods
    assert len(caps) == 13

    status = await session_mgr.health_check()
    assert status == {"status": "ok", "sessions": 1}

    # Lifecycle
    await session_mgr.clear_session("s1")  # Clears data but retains session lock
    await session_mgr.close()  # Sets _closed flag, clears all data
    assert await session_mgr.health_check() == {"status": "closed", "sessions": 0}

    # Async context manager
    async with InMemorySessionManager() as mgr:
        await mgr.save_messages("s1", messages)

    # 1.3: SessionMessage.to_langchain()
    kinds = [
        type(
            SessionMessage(role=r, content="x", session_id="s", user_id="u").to_langchain()
        ).__name__
        for r in ("user", "assistant", "ai", "system")
    ]
    assert kinds == ["HumanMessage", "AIMessage", "AIMessage", "SystemMessage"]


async def test_semantic_search_mixin() -> None:
    from deskwork.graph import InMemorySessionManager, Memory, SemanticSearchMixin

    # the reader's embedding provider and vector store
    class Embedder:
        async def embed(self, text: str) -> list[float]:
            return [float(len(text)), 1.0]

    class VectorStore:
        async def search(self, session_id: str, vec: list[float], limit: int) -> list[Memory]:
            return [Memory(session_id=session_id, key="hit", value=str(vec))][:limit]

    my_embedder = Embedder()

    class MySemanticSessionManager(SemanticSearchMixin, InMemorySessionManager):
        _vector_store = VectorStore()

        async def embed_text(self, text: str) -> list[float]:
            # Your embedding provider
            return await my_embedder.embed(text)

        async def search_memories_semantic(
            self, session_id: str, query: str, limit: int = 5,
        ) -> list[Memory]:  # fmt: skip
            query_vec = await self.embed_text(query)
            # Your vector similarity search implementation
            return await self._vector_store.search(session_id, query_vec, limit)

    found = await MySemanticSessionManager().search_memories_semantic("s1", "abc")
    assert [m.value for m in found] == ["[3.0, 1.0]"]

    class EmbedOnly(SemanticSearchMixin, InMemorySessionManager):
        async def embed_text(self, text: str) -> list[float]:
            return [0.0]

    with pytest.raises(NotImplementedError):
        await EmbedOnly().search_memories_semantic("s1", "abc")


# -- 1.4 #12-16 Middleware: tenant isolation, lifecycle hooks, metrics, circuit breaker, memory --


class MyAgent(BaseAgent):
    """The reader's agent: writes what ``slot`` says, optionally into an identity field."""

    def __init__(self, middleware: list[Any], *, slot: str = "note", fail: bool = False) -> None:
        agent_config = AgentConfig(name="my_agent", type="custom", description="Mine")
        super().__init__(config=agent_config, middleware=middleware)
        self.slot, self.fail = slot, fail

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        if self.fail:
            raise RuntimeError("backend down")
        return AgentResponse(
            agent_name=self.name,
            content="ok",
            next_agent="supervisor",
            slots_update={self.slot: "x"},
        )


async def test_tenant_isolation_middleware() -> None:
    from deskwork.graph import TenantIsolationError, TenantIsolationMiddleware
    from deskwork.graph.testing import make_test_state

    middleware = TenantIsolationMiddleware()
    agent = MyAgent(middleware=[middleware])
    assert (await agent.invoke(make_test_state()))["context_slots"] == {"note": "x"}
    with pytest.raises(TenantIsolationError):
        await MyAgent(middleware=[middleware], slot="user_id").invoke(make_test_state())


async def test_agent_middleware_onion_order(capsys: pytest.CaptureFixture[str]) -> None:
    from deskwork.graph import AgentMiddleware
    from deskwork.graph.testing import make_test_state

    class LoggingMiddleware(AgentMiddleware):
        async def before_invoke(
            self,
            agent_name: str,
            state: OrchestratorState,
            config: RunnableConfig | None = None,
        ) -> OrchestratorState:
            print(f"Before: {agent_name}")
            return state

        async def after_invoke(
            self,
            agent_name: str,
            state: OrchestratorState,
            response: AgentResponse,
            config: RunnableConfig | None = None,
        ) -> AgentResponse:
            print(f"After: {agent_name} -> {response.next_agent}")
            return response

        async def on_error(
            self,
            agent_name: str,
            state: OrchestratorState,
            error: Exception,
            config: RunnableConfig | None = None,
        ) -> None:
            print(f"Error: {agent_name}: {error}")

    class Tagged(LoggingMiddleware):
        def __init__(self, tag: str) -> None:
            self.tag = tag

        async def before_invoke(self, agent_name: str, *args: Any) -> OrchestratorState:
            print(f"[{self.tag}]", end=" ")
            return await super().before_invoke(agent_name, *args)

        async def after_invoke(self, agent_name: str, *args: Any) -> AgentResponse:
            print(f"[{self.tag}]", end=" ")
            return await super().after_invoke(agent_name, *args)

        async def on_error(self, agent_name: str, *args: Any) -> None:
            print(f"[{self.tag}]", end=" ")
            await super().on_error(agent_name, *args)

    await MyAgent(middleware=[Tagged("1"), Tagged("2")]).invoke(make_test_state())
    with pytest.raises(Exception, match="backend down"):
        await MyAgent(middleware=[Tagged("1"), Tagged("2")], fail=True).invoke(make_test_state())
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert lines == [
        "[1] Before: my_agent",
        "[2] Before: my_agent",
        "[2] After: my_agent -> supervisor",
        "[1] After: my_agent -> supervisor",
        "[1] Before: my_agent",
        "[2] Before: my_agent",
        "[2] Error: my_agent: backend down",
        "[1] Error: my_agent: backend down",
    ]


async def test_metrics_circuit_breaker_and_memory_injection() -> None:
    from deskwork.graph import (
        CircuitBreakerMiddleware,
        CircuitBreakerOpenError,
        InMemoryMetricsCollector,
        InMemorySessionManager,
        Memory,
        MemoryInjectionMiddleware,
        MetricsMiddleware,
        SupervisorAgent,
    )
    from deskwork.graph.testing import make_test_state

    collector = InMemoryMetricsCollector()
    metrics_mw = MetricsMiddleware(collector)
    agent = MyAgent(middleware=[metrics_mw])
    await agent.invoke(make_test_state())
    with pytest.raises(Exception, match="backend down"):
        await MyAgent(middleware=[metrics_mw], fail=True).invoke(make_test_state())
    assert [r.agent_name for r in collector.invocations] == ["my_agent"]
    assert [e.agent_name for e in collector.errors] == ["my_agent"]
    assert collector.invocations[0].duration_seconds >= 0

    cb = CircuitBreakerMiddleware(
        failure_threshold=5,  # failures before opening
        recovery_timeout_seconds=60,  # seconds before half-open probe
    )
    agent = MyAgent(middleware=[cb], fail=True)
    for _ in range(5):
        with pytest.raises(Exception, match="backend down"):
            await agent.invoke(make_test_state())
    with pytest.raises(CircuitBreakerOpenError):
        await agent.invoke(make_test_state())

    session_mgr = InMemorySessionManager()
    await session_mgr.store_memory(
        "s1", Memory(session_id="s1", key="tone", value="likes short answers", importance=0.7)
    )
    memory_mw = MemoryInjectionMiddleware(session_mgr, limit=5)
    llm = MockLLM(responses=["FINISH: Short answer."])
    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm=llm,
        topology=_topology(HUB_SPOKE, "greeter", "researcher"),
        middleware=[memory_mw],
    )
    update = await supervisor.invoke(make_test_state("short", session_id="s1"))
    assert update["messages"][0].content == "Short answer."
    assert "likes short answers" in str(llm.calls[0][0].content)


# -- 1.4 #17-18 Rate limiting, streaming ---------------------------------------------------------


async def test_rate_limiters() -> None:
    from deskwork.graph import PerTenantRateLimiter, SemaphoreRateLimiter, SupervisorAgent

    limiter = SemaphoreRateLimiter(max_concurrency=5, delay_seconds=0.1)
    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm=MockLLM(responses=["greeter"]),
        topology=_topology(HUB_SPOKE, "greeter", "researcher"),
        rate_limiter=limiter,
    )
    assert supervisor.rate_limiter is limiter

    limiter2 = PerTenantRateLimiter(
        max_concurrency=5,
        delay_seconds=0.0,
        max_tenants=10_000,
    )
    with pytest.raises(RuntimeError):
        await limiter2.acquire()  # set_tenant() first
    # In your request handler:
    limiter2.set_tenant("tenant-abc")
    await limiter2.acquire()
    try:
        pass  # ... LLM call ...
    finally:
        await limiter2.release()
    assert limiter2.tenant_count == 1

    async with SemaphoreRateLimiter(max_concurrency=5) as limiter3:
        await limiter3.acquire()
        await limiter3.release()
    assert limiter3.is_closed


async def test_streaming(capsys: pytest.CaptureFixture[str]) -> None:
    from deskwork.graph import SupervisorAgent, astream_with_timeout
    from deskwork.graph.testing import make_test_state

    supervisor = SupervisorAgent(
        config=AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm=MockLLM(stream_chunks=[["send it to ", "the greeter"]]),
        topology=_topology(HUB_SPOKE, "greeter", "researcher"),
    )
    state, config = make_test_state("Hi"), None
    with structlog.testing.capture_logs():  # keep the library's logs out of the output
        async for chunk_meta, accumulated in supervisor.astream_process(state, config):  # noqa: B007
            if chunk_meta["chunk_type"] == "token":
                print(chunk_meta["delta"], end="", flush=True)
            elif chunk_meta["chunk_type"] == "final":
                print(f"\nRouting to: {chunk_meta['next_agent']}")
    assert capsys.readouterr().out == "send it to the greeter\nRouting to: greeter\n"

    llm, messages = MockLLM(stream_chunks=[["Hel", "lo"]]), [HumanMessage("Hi")]
    async for chunk in astream_with_timeout(llm, messages, timeout_seconds=30.0, config=config):
        print(chunk.content, end="")
    assert capsys.readouterr().out == "Hello"


# -- 1.4 #20-22 Observability, structured logging, token counting ------------------------------


async def test_observability_spans_and_middleware() -> None:
    from deskwork.graph.observability import (
        OTEL_AVAILABLE,
        OpenTelemetryMiddleware,
        get_tracer,
        otel_span,
        sync_otel_span,
    )
    from deskwork.graph.testing import make_test_state

    assert isinstance(OTEL_AVAILABLE, bool) and get_tracer() is not None
    # Middleware: creates spans around agent invocations
    otel_mw = OpenTelemetryMiddleware()
    agent = MyAgent(middleware=[otel_mw])
    assert (await agent.invoke(make_test_state()))["current_agent"] == "supervisor"

    # Manual spans
    async with otel_span("my_operation", attributes={"key": "value"}) as span:
        # ... your code ...
        pass
    with sync_otel_span("react_pass", agent_name="supervisor", pass_num=1):
        # ... your code ...
        pass
    assert span is not None


def test_structured_logging_with_pii_redaction(capsys: pytest.CaptureFixture[str]) -> None:
    from deskwork.graph import bind_logging_context, clear_logging_context
    from deskwork.graph.testing import make_test_state

    # App developers must configure structlog with merge_contextvars:
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
    )
    try:
        state = make_test_state("Hi", session_id="s-secret", user_id="alice")
        bind_logging_context(state, {"metadata": {"langgraph_step": 3}}, redact_pii=True)
        structlog.get_logger().info("agent_invoke_start", agent_name="greeter")
        # Clear at request boundaries:
        clear_logging_context()
        structlog.get_logger().info("after_clear")
    finally:
        structlog.reset_defaults()
        clear_logging_context()
    first, second = capsys.readouterr().out.splitlines()
    assert "agent_invoke_start" in first and f"request_id={state['request_id']}" in first
    assert "langgraph_step=3" in first
    assert "alice" not in first and "s-secret" not in first  # 12-char SHA-256 prefixes instead
    assert "user_id=" in first and "request_id" not in second


def test_token_counting(monkeypatch: pytest.MonkeyPatch, llm_resources: Path) -> None:
    from deskwork.graph import (
        CharDivisionTokenCounter,
        ContextConfig,
        FileSystemKnowledgeLoader,
        ReactTemplateManager,
        SlotManager,
        SlotPool,
        TokenCounter,
    )

    # Default: len(text) // 4, minimum 1 for non-empty text, 0 for empty
    counter: TokenCounter = CharDivisionTokenCounter(chars_per_token=4)
    assert counter.count("hello world") == 2
    assert (counter.count("hi"), counter.count("")) == (1, 0)

    # a stand-in for tiktoken (the real one downloads its encodings)
    fake = type(sys)("tiktoken")
    fake.encoding_for_model = lambda model: type("Enc", (), {"encode": staticmethod(str.split)})()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)

    # Custom counter (e.g., tiktoken-based)
    class TiktokenCounter(TokenCounter):
        def __init__(self, model: str = "gpt-4o"):
            import tiktoken

            self._enc = tiktoken.encoding_for_model(model)

        def count(self, text: str) -> int:
            if not text:
                return 0
            return len(self._enc.encode(text))

    counter = TiktokenCounter()
    assert counter.count("three word text") == 3
    context_config, loader = ContextConfig(), FileSystemKnowledgeLoader("llm_resources")

    # Inject into components
    slot_pool = SlotPool(token_counter=counter)
    slot_manager = SlotManager(config=context_config, token_counter=counter)
    template_manager = ReactTemplateManager(
        agent_name="supervisor", base_dir="llm_resources",
        loader=loader, token_counter=counter,
    )  # fmt: skip
    slot_pool.add("k", "a b c d")
    assert slot_pool.total_tokens == 4
    assert slot_manager is not None and template_manager.token_counter is counter


# -- 1.4 #23, #25, #27 Errors, transient exceptions, OrchestratorContext ----------------------

ERROR_TREE = """\
OrchestratorError
  ConfigurationError
    ConfigLoadError
    ConfigValidationError
    LLMNotConfiguredError
    ReactExecutorNotConfiguredError
  AgentExecutionError
    AgentProcessError
  LLMError
    RateLimitExceededError
    LLMInvocationError
    LLMRetryExhaustedError
  SessionError
    SessionManagerError
    SessionManagerNotConfiguredError
  StateError
    InvalidStateError
  ContextError
    SlotPersistenceError
  KnowledgeError
    KnowledgeSlotNotFoundError
    KnowledgePathError
    KnowledgeLoadError
    KnowledgeConfigValidationError
  ReactError
    ReactCancellationError
    ReactMaxPassesError
    ReservedStateKeyError
    ReactConsecutiveErrorsError
  RoutingError
    RoutingSelfLoopError
  TenantIsolationError
  CircuitBreakerOpenError
"""


def _tree_pairs() -> list[tuple[str, str]]:
    pairs, parents = [], ["OrchestratorError"]
    for line in ERROR_TREE.splitlines()[1:]:
        depth = (len(line) - len(line.lstrip())) // 2
        del parents[depth:]
        pairs.append((line.strip(), parents[-1]))
        parents.append(line.strip())
    return pairs


@pytest.mark.parametrize(("name", "parent"), _tree_pairs())
def test_error_hierarchy(name: str, parent: str) -> None:
    import deskwork.graph as graph

    error, base = getattr(graph, name), getattr(graph, parent)
    assert error.__bases__[0] is base or base in error.__mro__
    assert issubclass(error, graph.OrchestratorError)


def test_transient_exception_registration() -> None:
    from deskwork.graph import (
        deregister_transient_exception,
        get_transient_exceptions,
        register_transient_exception,
    )

    class RateLimitError(Exception):  # the provider's exception (anthropic is not installed)
        pass

    # At app startup
    register_transient_exception(RateLimitError)
    try:
        # Check current set
        assert get_transient_exceptions() == (OSError, TimeoutError, RateLimitError)
    finally:
        # Deregister (safe in test teardown, no-op if not registered)
        deregister_transient_exception(RateLimitError)
    deregister_transient_exception(RateLimitError)
    assert get_transient_exceptions() == (OSError, TimeoutError)


async def test_orchestrator_context_lifecycle(llm_resources: Path) -> None:
    from deskwork.graph import (
        ContextConfig,
        InMemorySessionManager,
        OrchestratorContext,
        ReactTemplateManager,
        SemaphoreRateLimiter,
        SlotManager,
    )

    closed: list[str] = []

    class CustomResource:
        async def aclose(self) -> None:
            closed.append("custom_resource")

    slot_mgr, session_mgr = SlotManager(config=ContextConfig()), InMemorySessionManager()
    tm = ReactTemplateManager(agent_name="supervisor", base_dir="llm_resources")
    limiter, custom_resource = SemaphoreRateLimiter(max_concurrency=2), CustomResource()

    ctx = OrchestratorContext(
        slot_manager=slot_mgr,
        session_manager=session_mgr,
        template_managers=[tm],
        rate_limiter=limiter,
        extras=[custom_resource],
    )
    async with ctx:
        # Run your graph
        assert not ctx.is_closed
    # Check status
    print(ctx.is_closed)  # True after close()
    assert ctx.is_closed and closed == ["custom_resource"]
    assert tm.is_closed and limiter.is_closed
    assert (await session_mgr.health_check())["status"] == "closed"


# -- 1.4 #28 Testing utilities -----------------------------------------------------------------


async def test_testing_utilities() -> None:
    from deskwork.graph.testing import InMemorySessionManager, MockLLM, make_test_state

    # MockLLM returns scripted responses
    llm = MockLLM(responses=[
        '<thought>Routing to greeter</thought>'
        '<action type="decide">{"next_agent": "greeter"}</action>',
        "Hello!",
    ])  # fmt: skip
    assert "decide" in str((await llm.ainvoke("hi")).content)
    assert (await llm.ainvoke("hi")).content == "Hello!"
    # Raises IndexError when exhausted
    with pytest.raises(IndexError):
        await llm.ainvoke("hi")
    # Optional: raise_on_call=ValueError to test error handling
    with pytest.raises(ValueError):
        await MockLLM(raise_on_call=ValueError).ainvoke("hi")
    # Optional: stream_chunks=[["chunk1", "chunk2"]] for astream testing
    chunks = [c.content async for c in MockLLM(stream_chunks=[["chunk1", "chunk2"]]).astream("x")]
    assert [c for c in chunks if c] == ["chunk1", "chunk2"]  # LangChain may end with an empty one
    # Optional: structured_responses=[obj] for with_structured_output testing
    structured = MockLLM(structured_responses=[{"next_agent": "greeter"}])
    from deskwork.graph.agents._routing import RouteDecision

    decision = await structured.with_structured_output(RouteDecision).ainvoke("x")
    assert decision == RouteDecision(next_agent="greeter")
    # Optional: usage_tokens={"input_tokens": 10, "output_tokens": 5}
    usage = (
        await MockLLM(
            responses=["a"], usage_tokens={"input_tokens": 10, "output_tokens": 5}
        ).ainvoke("x")
    ).usage_metadata
    assert usage is not None and (usage["input_tokens"], usage["output_tokens"]) == (10, 5)

    # make_test_state creates a pre-populated OrchestratorState
    state = make_test_state("Hello")
    # Defaults: session_id="test-session", user_id="test-user"
    assert (state["session_id"], state["user_id"]) == ("test-session", "test-user")
    state = make_test_state("Hello", session_id="s1", user_id="alice")
    assert (state["session_id"], state["user_id"], state["messages"][0].content) == (
        "s1",
        "alice",
        "Hello",
    )

    # InMemorySessionManager re-exported for convenience
    session_mgr = InMemorySessionManager()
    assert (await session_mgr.health_check())["status"] == "ok"


# -- statements of 1.3, 1.4 and 1.7 the samples above do not reach -----------------------------


async def test_minimal_custom_session_manager_and_rate_limiter() -> None:
    from deskwork.graph import RateLimiter, SessionManager, SessionMessage

    class ListSessionManager(SessionManager):  # only the three abstract methods
        def __init__(self) -> None:
            self.rows: dict[str, list[SessionMessage]] = {}

        async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
            self.rows.setdefault(session_id, []).extend(messages)

        async def get_messages(
            self, session_id: str, limit: int = 50, user_id: str | None = None
        ) -> list[SessionMessage]:
            return self.rows.get(session_id, [])[-limit:]

        async def clear_session(self, session_id: str) -> None:
            self.rows.pop(session_id, None)

    async with ListSessionManager() as mgr:
        await mgr.save_messages("s1", [SessionMessage(role="ai", content="hi", session_id="s1")])
        assert [m.to_langchain().type for m in await mgr.get_messages("s1")] == ["ai"]
        with pytest.raises(NotImplementedError):
            await mgr.get_summary("s1")
        assert await mgr.health_check() == {"status": "ok"}

    class CountingLimiter(RateLimiter):  # release() and close() have no-op defaults
        calls = 0

        async def acquire(self) -> None:
            self.calls += 1

    limiter = CountingLimiter()
    async with limiter:
        await limiter.acquire()
        await limiter.release()
    assert limiter.calls == 1


async def test_per_tenant_limiter_evicts_the_least_recently_used_tenant() -> None:
    from deskwork.graph import PerTenantRateLimiter

    limiter = PerTenantRateLimiter(max_concurrency=1, max_tenants=2)
    for tenant in ("a", "b", "a", "c"):
        limiter.set_tenant(tenant)
        await limiter.acquire()
        await limiter.release()
    assert limiter.tenant_count == 2  # "b" was the least recently used


async def test_registered_transient_exceptions_are_retried() -> None:
    from deskwork.graph import (
        RetryConfig,
        ainvoke_with_retry,
        deregister_transient_exception,
        register_transient_exception,
    )

    class ProviderOverloaded(Exception):
        pass

    retry = RetryConfig(max_attempts=2, initial_interval=0.001, max_interval=0.001)
    register_transient_exception(ProviderOverloaded)
    try:
        llm = MockLLM(responses=[ProviderOverloaded("busy"), "ok"])
        assert (await ainvoke_with_retry(llm, "hi", retry_config=retry)).content == "ok"
    finally:
        deregister_transient_exception(ProviderOverloaded)
    with pytest.raises(Exception, match="busy"):
        await ainvoke_with_retry(MockLLM(responses=[ProviderOverloaded("busy"), "ok"]), "hi")


async def test_agents_emit_the_documented_log_events(llm_resources: Path) -> None:
    from deskwork.graph import ReactTemplateManager, SupervisorAgent
    from deskwork.graph.testing import make_test_state

    supervisor = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        MockLLM(
            responses=[
                "<thought>To greeter.</thought>"
                '<action type="decide">{"next_agent": "greeter"}</action>'
            ]
        ),
        _topology(HUB_SPOKE, "greeter", "researcher"),
        template_manager=ReactTemplateManager("supervisor", "llm_resources"),
    )
    with structlog.testing.capture_logs() as logs:
        await supervisor.invoke(make_test_state("Hi"))
    by_event = {entry["event"]: entry for entry in logs}
    assert {"agent_invoke_start", "react_pass", "react_terminal", "routing_decision"} <= set(
        by_event
    )
    assert by_event["agent_invoke_completed"]["next_agent"] == "greeter"
    assert (by_event["react_pass"]["pass_num"], by_event["react_pass"]["action"]) == (1, "decide")
    assert by_event["routing_decision"]["allowed_targets"] == ["greeter", "researcher"]
    assert all("agent" not in entry for entry in logs)  # agent_name=, never agent=
    # streaming needs the whole reply in ReAct mode
    with pytest.raises(NotImplementedError):
        async for _ in supervisor.astream_process(make_test_state("Hi")):
            pass


async def test_identity_mutation_is_logged_and_string_tiers_work() -> None:
    from deskwork.graph.testing import make_test_state

    class Meddler(BaseAgent):
        async def process(
            self, state: OrchestratorState, config: RunnableConfig | None = None
        ) -> AgentResponse:
            state["user_id"] = "someone-else"
            return AgentResponse(
                agent_name=self.name,
                content="done",
                slots_tier={"x": "session"},  # type: ignore[dict-item]
                slots_update={"x": 1},
            )

    agent = Meddler(AgentConfig(name="meddler", type="custom", description="Meddles"))
    with structlog.testing.capture_logs() as logs:
        update = await agent.invoke(make_test_state())
    warnings = [e for e in logs if e["event"] == "identity_field_mutated"]
    assert warnings and warnings[0]["log_level"] == "warning"
    assert warnings[0]["fields"] == ["user_id"]
    assert update["messages"][0].response_metadata["slots_tier"] == {"x": "session"}
