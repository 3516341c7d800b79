"""The SessionManager port and the semantic-search mix-in."""

from __future__ import annotations

import math

import pytest

from deskwork.graph.session import (
    InMemorySessionManager,
    Memory,
    SemanticSearchMixin,
    SessionManager,
    SessionMessage,
    Summary,
)


class MessagesOnly(SessionManager):
    """The three abstract methods and nothing else."""

    def __init__(self) -> None:
        self.data: dict[str, list[SessionMessage]] = {}

    async def save_messages(self, session_id: str, messages: list[SessionMessage]) -> None:
        self.data.setdefault(session_id, []).extend(messages)

    async def get_messages(
        self, session_id: str, limit: int = 50, user_id: str | None = None
    ) -> list[SessionMessage]:
        return self.data.get(session_id, [])[-limit:]

    async def clear_session(self, session_id: str) -> None:
        self.data.pop(session_id, None)


def test_three_methods_are_abstract() -> None:
    assert SessionManager.__abstractmethods__ == {"save_messages", "get_messages", "clear_session"}
    with pytest.raises(TypeError):
        SessionManager()  # type: ignore[abstract]


async def test_optional_methods_raise_not_implemented_naming_the_class() -> None:
    manager = MessagesOnly()
    memory = Memory(session_id="s1", key="k", value="v")
    calls = [
        manager.save_summary("s1", Summary(session_id="s1", content="x")),
        manager.get_summary("s1"),
        manager.store_memory("s1", memory),
        manager.recall_memory("s1", "k"),
        manager.search_memories("s1", "q"),
        manager.search_memories_by_user("alice", "q"),
        manager.get_messages_paginated("s1"),
        manager.update_memory("s1", "id", {}),
        manager.delete_memory("s1", "id"),
        manager.list_memories("s1"),
    ]
    for call in calls:
        with pytest.raises(NotImplementedError, match="MessagesOnly does not implement"):
            await call


async def test_capabilities_list_the_core_methods_plus_overrides() -> None:
    assert MessagesOnly().get_capabilities() == {"save_messages", "get_messages", "clear_session"}

    class WithSummaries(MessagesOnly):
        async def get_summary(self, session_id: str) -> Summary | None:
            return None

    assert WithSummaries().get_capabilities() == {
        "save_messages",
        "get_messages",
        "clear_session",
        "get_summary",
    }


async def test_default_health_check_and_async_context_manager() -> None:
    manager = MessagesOnly()
    assert await manager.health_check() == {"status": "ok"}
    async with manager as entered:
        assert entered is manager
        await manager.save_messages(
            "s1", [SessionMessage(role="user", content="hi", session_id="s1")]
        )
    assert manager.is_closed


async def test_in_memory_close_clears_all_data() -> None:
    manager = InMemorySessionManager()
    await manager.save_messages("s1", [SessionMessage(role="user", content="hi", session_id="s1")])
    assert await manager.health_check() == {"status": "ok", "sessions": 1}
    assert repr(manager) == "InMemorySessionManager(sessions=1)"
    await manager.close()
    assert repr(manager) == "InMemorySessionManager(closed)"
    assert await manager.health_check() == {"status": "closed", "sessions": 0}


# -- semantic search ---------------------------------------------------------------------


def _vector(text: str) -> list[float]:
    return [float(text.lower().count(ch)) for ch in "aeiou"]


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


class VowelSemanticManager(SemanticSearchMixin, InMemorySessionManager):
    """The guide's pattern with a toy embedding (vowel counts)."""

    async def embed_text(self, text: str) -> list[float]:
        return _vector(text)

    async def search_memories_semantic(
        self, session_id: str, query: str, limit: int = 5
    ) -> list[Memory]:
        query_vec = await self.embed_text(query)
        memories = (await self.list_memories(session_id, limit=1000)).items
        scored = [(_cosine(query_vec, await self.embed_text(m.value)), m) for m in memories]
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [m for _, m in scored[:limit]]


class EmbeddingOnly(SemanticSearchMixin, InMemorySessionManager):
    async def embed_text(self, text: str) -> list[float]:
        return [0.0]


def test_the_mixin_requires_embed_text() -> None:
    class NoEmbedding(SemanticSearchMixin, InMemorySessionManager):
        pass

    with pytest.raises(TypeError):
        NoEmbedding()  # type: ignore[abstract]


async def test_semantic_search_defaults_to_not_implemented() -> None:
    manager = EmbeddingOnly()
    with pytest.raises(NotImplementedError, match="search_memories_semantic"):
        await manager.search_memories_semantic("s1", "query")
    assert "search_memories_semantic" not in manager.get_capabilities()
    assert len(manager.get_capabilities()) == 13


async def test_an_implemented_semantic_search_works_and_is_advertised() -> None:
    manager = VowelSemanticManager()
    await manager.store_memory("s1", Memory(session_id="s1", key="a", value="aaaa"))
    await manager.store_memory("s1", Memory(session_id="s1", key="o", value="oooo"))
    found = await manager.search_memories_semantic("s1", "banana", limit=1)
    assert [m.key for m in found] == ["a"]
    assert manager.get_capabilities() == InMemorySessionManager().get_capabilities() | {
        "search_memories_semantic"
    }
