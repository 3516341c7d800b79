"""SessionManagerAgent: session methods as ReAct actions, identity from the state only."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

from deskwork.graph.agents.session_manager_agent import SessionManagerAgent
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.exceptions import (
    LLMNotConfiguredError,
    ReactExecutorNotConfiguredError,
    SessionManagerNotConfiguredError,
)
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.session.in_memory import InMemorySessionManager
from deskwork.graph.session.interface import SessionManager
from deskwork.graph.session.models import Memory, SessionMessage
from deskwork.graph.testing import MockLLM, make_test_state

CONFIG = AgentConfig(name="historian", type="session_manager", description="Knows the past")

REACT_CONFIG = """
max_passes: 4
actions:
  get_messages:
    description: Read recent messages of this session
    parameters: {limit: How many}
  search_memories:
    description: Search this session's memories
    parameters: {query: What to look for}
    required: [query]
  store_memory:
    description: Remember a fact
    parameters: {key: Name, value: Fact, importance: 0..1}
    required: [key, value]
  respond:
    description: Answer and finish
    parameters: {content: The answer, next_agent: Where to go next}
    required: [content]
"""


class MinimalManager(SessionManager):
    """Only the three abstract methods: no memories, no summaries."""

    async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
        return None

    async def get_messages(
        self, session_id: str, limit: int = 50, user_id: str | None = None
    ) -> list[SessionMessage]:
        return []

    async def clear_session(self, session_id: str) -> None:
        return None


def template_manager(tmp_path: Path) -> ReactTemplateManager:
    folder = tmp_path / "kb" / "historian"
    folder.mkdir(parents=True)
    (folder / "react_config.yaml").write_text(textwrap.dedent(REACT_CONFIG))
    (folder / "react_core.md").write_text("You are {agent_name}. Actions:\n{available_actions}")
    return ReactTemplateManager("historian", tmp_path / "kb")


def act(action: str, **params: Any) -> str:
    return f'<thought>step</thought><action type="{action}">{json.dumps(params)}</action>'


def prompt_of(llm: MockLLM, call: int) -> str:
    return str(llm.calls[call][-1].content)


class TestConstruction:
    def test_llm_and_session_manager_are_required(self) -> None:
        with pytest.raises(LLMNotConfiguredError):
            SessionManagerAgent(CONFIG, None, InMemorySessionManager())  # type: ignore[arg-type]
        with pytest.raises(SessionManagerNotConfiguredError):
            SessionManagerAgent(CONFIG, MockLLM(), None)  # type: ignore[arg-type]

    def test_missing_handler_in_capability_map_fails_at_construction(self) -> None:
        class Broken(SessionManagerAgent):
            _CAPABILITY_HANDLER_MAP: ClassVar[dict[str, str]] = {
                "get_messages": "_handle_get_messages",
                "get_summary": "_handle_nothing",
            }

        with pytest.raises(AttributeError, match="get_summary -> _handle_nothing"):
            Broken(CONFIG, MockLLM(), InMemorySessionManager())

    def test_actions_follow_the_managers_capabilities(self) -> None:
        minimal = SessionManagerAgent(CONFIG, MockLLM(), MinimalManager())
        assert sorted(minimal.action_handlers) == ["get_messages", "respond"]
        full = SessionManagerAgent(CONFIG, MockLLM(), InMemorySessionManager())
        assert sorted(full.action_handlers) == [
            "get_messages",
            "get_summary",
            "recall_memory",
            "respond",
            "search_memories",
            "search_memories_by_user",
            "store_memory",
        ]

    def test_optional_arguments_are_keyword_only(self) -> None:
        with pytest.raises(TypeError):
            SessionManagerAgent(CONFIG, MockLLM(), MinimalManager(), None)  # type: ignore[misc]

    async def test_needs_a_template_manager_to_run(self) -> None:
        agent = SessionManagerAgent(CONFIG, MockLLM(), MinimalManager())
        with pytest.raises(ReactExecutorNotConfiguredError, match="ReactTemplateManager"):
            await agent.invoke(make_test_state())


class TestReactRun:
    async def test_searches_memories_then_responds(self, tmp_path: Path) -> None:
        mgr = InMemorySessionManager()
        await mgr.store_memory(
            "test-session", Memory(session_id="test-session", key="theme", value="dark mode")
        )
        llm = MockLLM(
            responses=[
                act("search_memories", query="theme"),
                act("respond", content="You prefer dark mode.", next_agent="supervisor"),
            ]
        )
        agent = SessionManagerAgent(CONFIG, llm, mgr, template_manager=template_manager(tmp_path))
        update = await agent.invoke(make_test_state("What theme do I like?"))
        assert update["messages"][0].content == "You prefer dark mode."
        assert update["current_agent"] == "supervisor"
        assert "theme: dark mode" in prompt_of(llm, 1)  # the observation the model saw

    async def test_identity_comes_from_the_state_not_from_the_model(self, tmp_path: Path) -> None:
        mgr = InMemorySessionManager()
        await mgr.save_messages(
            "victim-session",
            [SessionMessage(session_id="victim-session", role="user", content="secret plans")],
        )
        await mgr.save_messages(
            "test-session",
            [SessionMessage(session_id="test-session", role="user", content="my own words")],
        )
        llm = MockLLM(
            responses=[
                act("get_messages", session_id="victim-session", limit=5),
                act("respond", content="done"),
            ]
        )
        agent = SessionManagerAgent(CONFIG, llm, mgr, template_manager=template_manager(tmp_path))
        update = await agent.invoke(make_test_state())
        assert "my own words" in prompt_of(llm, 1)
        assert "secret plans" not in prompt_of(llm, 1)
        assert update["current_agent"] == "historian"  # respond without next_agent ends

    async def test_store_memory_records_owner_and_source_agent(self, tmp_path: Path) -> None:
        mgr = InMemorySessionManager()
        llm = MockLLM(
            responses=[
                act("store_memory", key="city", value="Lisbon", importance=0.7),
                act("respond", content="noted"),
            ]
        )
        agent = SessionManagerAgent(CONFIG, llm, mgr, template_manager=template_manager(tmp_path))
        await agent.invoke(make_test_state(user_id="alice"))
        memory = await mgr.recall_memory("test-session", "city")
        assert memory is not None
        assert (memory.value, memory.user_id, memory.source_agent) == (
            "Lisbon",
            "alice",
            "historian",
        )
        assert memory.importance == 0.7

    async def test_failing_session_backend_becomes_an_observation(self, tmp_path: Path) -> None:
        class Down(InMemorySessionManager):
            async def search_memories(self, *a: Any, **k: Any) -> list[Memory]:
                raise ConnectionError("db unreachable")

        llm = MockLLM(
            responses=[act("search_memories", query="x"), act("respond", content="sorry")]
        )
        agent = SessionManagerAgent(
            CONFIG, llm, Down(), template_manager=template_manager(tmp_path)
        )
        update = await agent.invoke(make_test_state())
        assert update["messages"][0].content == "sorry"
        observation = prompt_of(llm, 1)
        assert "SessionManagerError" in observation
        assert "db unreachable" in observation

    def test_repr_lists_actions(self) -> None:
        agent = SessionManagerAgent(CONFIG, MockLLM(), MinimalManager())
        assert repr(agent) == (
            "SessionManagerAgent(name='historian', actions=['get_messages', 'respond'], "
            "middleware=[])"
        )
