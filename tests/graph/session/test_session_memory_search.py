"""Memory search finds memories from a whole chat message, the same way in every manager.

``MemoryInjectionMiddleware`` uses the last message as the query, so a search must match on the
words of a sentence, not only when the whole sentence occurs inside a memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from deskwork.graph import MemoryInjectionMiddleware, create_initial_state
from deskwork.graph.session import (
    InMemorySessionManager,
    Memory,
    SessionManager,
    StoreSessionManager,
)
from deskwork.memory import InMemoryMemoryStore, SQLiteMemoryStore


@pytest.fixture(params=["in-memory", "store:in-memory", "store:sqlite"])
async def mgr(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionManager]:
    manager: SessionManager
    if request.param == "in-memory":
        manager = InMemorySessionManager()
    elif request.param == "store:in-memory":
        manager = StoreSessionManager(InMemoryMemoryStore())
    else:
        manager = StoreSessionManager(SQLiteMemoryStore(tmp_path / "deskwork.db"))
    yield manager
    await manager.close()


async def _remember(mgr: SessionManager) -> None:
    for key, value, importance, categories in [
        ("theme", "User prefers dark mode", 0.6, ["ui"]),
        ("billing_plan", "Pro plan, renews in March", 0.9, ["billing"]),
        ("pet", "Has a dog called Rex", 0.3, []),
    ]:
        memory = Memory(
            session_id="s1",
            key=key,
            value=value,
            importance=importance,
            categories=categories,
            user_id="alice",
        )
        await mgr.store_memory("s1", memory, user_id="alice")


async def test_a_sentence_finds_memories_sharing_its_words(mgr: SessionManager) -> None:
    await _remember(mgr)
    found = await mgr.search_memories("s1", "Can you switch the UI to DARK mode please?")
    assert [m.key for m in found] == ["theme"]
    found = await mgr.search_memories("s1", "When does my plan renew? Also how is my dog?")
    assert [m.key for m in found] == ["billing_plan", "pet"]  # ranked by importance
    by_user = await mgr.search_memories_by_user("alice", "what about billing and my dogs")
    assert [m.key for m in by_user] == ["billing_plan", "pet"]


async def test_stop_words_alone_match_nothing(mgr: SessionManager) -> None:
    await _remember(mgr)
    assert await mgr.search_memories("s1", "What is it that you have for me?") == []
    assert await mgr.search_memories("s1", "weather tomorrow") == []
    assert await mgr.search_memories("s1", "Hi! I'd like to know, can't you tell me?") == []


async def test_key_words_match_and_substrings_still_work(mgr: SessionManager) -> None:
    await _remember(mgr)
    # "billing" and "plan" are words of the key billing_plan; "the" is ignored
    assert [m.key for m in await mgr.search_memories("s1", "the billing plan")] == ["billing_plan"]
    assert [m.key for m in await mgr.search_memories("s1", "bill")] == ["billing_plan"]
    assert len(await mgr.search_memories("s1", "")) == 3


def test_memory_matches_uses_the_same_rule() -> None:
    memory = Memory(session_id="s1", key="user_preference", value="Dark mode")
    assert memory.matches("What are my preferences?")
    assert memory.matches("PREF")
    assert not memory.matches("Is this it?")


async def test_memory_injection_finds_memories_for_a_real_message() -> None:
    mgr = InMemorySessionManager()
    await _remember(mgr)
    middleware = MemoryInjectionMiddleware(mgr, limit=5)
    state = create_initial_state("hi", session_id="s1", user_id="alice")
    state["messages"] = [HumanMessage(content="I'd like my invoices for the Pro plan, please")]
    injected = await middleware.before_invoke("supervisor", state)
    memories = injected["knowledge_context"]["_injected_memories"]
    assert [m["key"] for m in memories] == ["billing_plan"]
