"""A supervisor shows injected memories the same way in simple and in ReAct mode.

ReAct mode used to fill the core prompt's ``{injected_memories}`` with the raw memory dicts (ids,
timestamps, importance, metadata); simple mode wrote ``- key: value`` lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskwork.graph.agents.memory_injection import MemoryInjectionMiddleware
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.session.in_memory import InMemorySessionManager
from deskwork.graph.session.models import Memory
from deskwork.graph.testing import MockLLM, make_test_state

REACT_CONFIG = """\
actions:
  decide:
    description: Make the routing decision
    parameters: {next_agent: Target agent}
    required: [next_agent]
"""
EXPECTED = "- plan: premium\n- name: Alice"


async def _sessions() -> InMemorySessionManager:
    sessions = InMemorySessionManager()
    for key, value, importance in [("name", "Alice", 0.4), ("plan", "premium", 0.9)]:
        memory = Memory(
            session_id="s", key=key, value=value, importance=importance, categories=["account"]
        )
        await sessions.store_memory("s", memory, user_id="u")
    return sessions


async def _system_prompt(tmp_path: Path, *, react: bool) -> str:
    folder = tmp_path / "kb" / "supervisor"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "react_config.yaml").write_text(REACT_CONFIG)
    (folder / "react_core.md").write_text("Known:\n{injected_memories}\nEnd.")
    answer = '<action type="decide">{"next_agent": "greeter"}</action>' if react else "greeter"
    llm = MockLLM(responses=[answer])
    kwargs: dict[str, Any] = {}
    if react:
        kwargs["template_manager"] = ReactTemplateManager("supervisor", tmp_path / "kb")
    agent = SupervisorAgent(
        AgentConfig(name="supervisor", type="supervisor", description="Routes"),
        llm,
        TopologyResolver(
            TopologyConfig(edges=[TopologyEdgeConfig(from_agent="supervisor", to_agent="greeter")])
        ),
        middleware=[MemoryInjectionMiddleware(await _sessions())],
        **kwargs,
    )
    update = await agent.invoke(make_test_state("account", session_id="s", user_id="u"))
    assert update["current_agent"] == "greeter"
    return str(llm.calls[0][0].content)


async def test_both_modes_render_memories_as_key_value_lines(tmp_path: Path) -> None:
    simple = await _system_prompt(tmp_path, react=False)
    react = await _system_prompt(tmp_path, react=True)
    assert EXPECTED in simple
    assert f"Known:\n{EXPECTED}\nEnd." in react
    for raw in ("'id'", "created_at", "importance", "session_id"):
        assert raw not in react
