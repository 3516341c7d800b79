"""The session-manager contract, run against every shipped manager.

``InMemorySessionManager`` and ``StoreSessionManager`` over both deskwork memory stores must
behave the same for every one of the 13 methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from deskwork.graph.session import (
    InMemorySessionManager,
    Memory,
    SessionManager,
    SessionMessage,
    StoreSessionManager,
    Summary,
)
from deskwork.memory import InMemoryMemoryStore, SQLiteMemoryStore

ALL_13 = {
    "save_messages",
    "get_messages",
    "clear_session",
    "save_summary",
    "get_summary",
    "store_memory",
    "recall_memory",
    "search_memories",
    "search_memories_by_user",
    "get_messages_paginated",
    "update_memory",
    "delete_memory",
    "list_memories",
}


@pytest.fixture(params=["in-memory", "store:in-memory", "store:sqlite", "store:postgres"])
async def mgr(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionManager]:
    manager: SessionManager
    if request.param == "in-memory":
        manager = InMemorySessionManager()
    elif request.param == "store:in-memory":
        manager = StoreSessionManager(InMemoryMemoryStore())
    elif request.param == "store:sqlite":
        manager = StoreSessionManager(SQLiteMemoryStore(tmp_path / "deskwork.db"))
    else:
        manager = StoreSessionManager.from_database_url(request.getfixturevalue("postgres_url"))
    yield manager
    await manager.close()


def msg(content: str, role: str = "user", session_id: str = "s1", user_id: str | None = "alice"):  # type: ignore[no-untyped-def]
    return SessionMessage(role=role, content=content, session_id=session_id, user_id=user_id)  # type: ignore[arg-type]


def mem(key: str, value: str = "v", session_id: str = "s1", **fields: object) -> Memory:
    return Memory(session_id=session_id, key=key, value=value, **fields)  # type: ignore[arg-type]


def contents(messages: list[SessionMessage]) -> list[str]:
    return [m.content for m in messages]


# -- messages ----------------------------------------------------------------------------


async def test_messages_come_back_in_order_and_limit_keeps_the_most_recent(
    mgr: SessionManager,
) -> None:
    await mgr.save_messages("s1", [msg("one"), msg("two", "assistant", user_id=None)])
    await mgr.save_messages("s1", [msg("three")])
    await mgr.save_messages("s1", [])
    assert contents(await mgr.get_messages("s1")) == ["one", "two", "three"]
    assert contents(await mgr.get_messages("s1", limit=2)) == ["two", "three"]
    assert await mgr.get_messages("unknown") == []


@pytest.mark.parametrize("limit", [0, -1])
async def test_limits_below_one_are_rejected(mgr: SessionManager, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        await mgr.get_messages("s1", limit=limit)
    with pytest.raises(ValueError, match="limit"):
        await mgr.get_messages_paginated("s1", limit=limit)
    with pytest.raises(ValueError, match="limit"):
        await mgr.list_memories("s1", limit=limit)
    with pytest.raises(ValueError, match="limit"):
        await mgr.search_memories("s1", "q", limit=limit)
    with pytest.raises(ValueError, match="limit"):
        await mgr.search_memories_by_user("alice", "q", limit=limit)


async def test_a_message_of_another_session_is_rejected(mgr: SessionManager) -> None:
    with pytest.raises(ValueError, match="belongs to session 's2'"):
        await mgr.save_messages("s1", [msg("a"), msg("b", session_id="s2")])
    assert await mgr.get_messages("s1") == []
    with pytest.raises(ValueError, match="session_id"):
        await mgr.get_messages("")


async def test_another_user_cannot_read_a_session(mgr: SessionManager) -> None:
    await mgr.save_messages("s1", [msg("secret"), msg("reply", "ai", user_id=None)])
    assert contents(await mgr.get_messages("s1", user_id="alice")) == ["secret", "reply"]
    assert await mgr.get_messages("s1", user_id="bob") == []
    assert (await mgr.get_messages_paginated("s1", user_id="bob")).items == []
    assert len(await mgr.get_messages("s1")) == 2  # no user_id: a trusted caller


async def test_pagination_walks_all_messages_with_cursors(mgr: SessionManager) -> None:
    await mgr.save_messages("s1", [msg(f"m{i}") for i in range(5)])
    pages, cursor = [], None
    while True:
        page = await mgr.get_messages_paginated("s1", cursor=cursor, limit=2)
        pages.append((contents(page.items), page.has_more))
        if not page.has_more:
            assert page.next_cursor is None
            break
        assert page.next_cursor is not None
        cursor = page.next_cursor
    assert pages == [(["m0", "m1"], True), (["m2", "m3"], True), (["m4"], False)]
    exact = await mgr.get_messages_paginated("s1", limit=5)
    assert len(exact.items) == 5 and not exact.has_more
    with pytest.raises(ValueError, match="cursor"):
        await mgr.get_messages_paginated("s1", cursor="not-a-cursor")


# -- summaries ---------------------------------------------------------------------------


async def test_summary_is_saved_replaced_and_checked(mgr: SessionManager) -> None:
    assert await mgr.get_summary("s1") is None
    await mgr.save_summary("s1", Summary(session_id="s1", content="first"))
    await mgr.save_summary("s1", Summary(session_id="s1", content="second", user_id="alice"))
    summary = await mgr.get_summary("s1")
    assert summary is not None and summary.content == "second"
    with pytest.raises(ValueError, match="belongs to session"):
        await mgr.save_summary("s1", Summary(session_id="s2", content="x"))


# -- memories ----------------------------------------------------------------------------


async def test_the_guide_memory_example(mgr: SessionManager) -> None:
    await mgr.store_memory(
        "s1",
        Memory(
            session_id="s1", key="preference", value="dark mode", importance=0.8, user_id="alice"
        ),
        user_id="alice",
    )
    memory = await mgr.recall_memory("s1", "preference")
    assert memory is not None and memory.value == "dark mode"
    assert [m.key for m in await mgr.search_memories("s1", "preference", limit=5)] == ["preference"]
    assert len(await mgr.search_memories_by_user("alice", "preference", limit=10)) == 1
    updated = await mgr.update_memory("s1", memory.id, {"importance": 0.9}, user_id="alice")
    assert updated is not None and updated.importance == 0.9 and updated.updated_at is not None
    assert updated.id == memory.id and updated.created_at == memory.created_at
    recalled = await mgr.recall_memory("s1", "preference")
    assert recalled is not None and recalled.importance == 0.9
    assert await mgr.delete_memory("s1", memory.id, user_id="alice") is True
    assert await mgr.recall_memory("s1", "preference") is None


async def test_storing_a_key_again_replaces_the_memory(mgr: SessionManager) -> None:
    await mgr.store_memory("s1", mem("city", "Paris"))
    await mgr.store_memory("s1", mem("city", "Lyon"))
    recalled = await mgr.recall_memory("s1", "city")
    assert recalled is not None and recalled.value == "Lyon"
    assert [m.value for m in (await mgr.list_memories("s1")).items] == ["Lyon"]
    assert await mgr.recall_memory("s2", "city") is None


async def test_search_ranks_by_importance_and_matches_categories(mgr: SessionManager) -> None:
    await mgr.store_memory("s1", mem("low", "about tea", importance=0.1))
    await mgr.store_memory("s1", mem("high", "about tea", importance=0.9))
    await mgr.store_memory("s1", mem("mid", "unrelated", importance=0.5, categories=["Tea"]))
    await mgr.store_memory("s1", mem("other", "coffee", importance=1.0))
    found = await mgr.search_memories("s1", "TEA")
    assert [m.key for m in found] == ["high", "mid", "low"]
    assert [m.key for m in await mgr.search_memories("s1", "tea", limit=1)] == ["high"]
    everything = await mgr.search_memories("s1", "")
    assert [m.key for m in everything] == ["other", "high", "mid", "low"]


async def test_expired_memories_are_never_returned(mgr: SessionManager) -> None:
    past = datetime.now(UTC) - timedelta(seconds=1)
    await mgr.store_memory("s1", mem("old", "tea", expires_at=past, user_id="alice"))
    await mgr.store_memory("s1", mem("fresh", "tea", user_id="alice"))
    assert await mgr.recall_memory("s1", "old") is None
    assert [m.key for m in await mgr.search_memories("s1", "tea")] == ["fresh"]
    assert [m.key for m in await mgr.search_memories_by_user("alice", "tea")] == ["fresh"]
    assert [m.key for m in (await mgr.list_memories("s1")).items] == ["fresh"]


async def test_updating_expiry_brings_a_memory_back(mgr: SessionManager) -> None:
    memory = mem("k", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    await mgr.store_memory("s1", memory)
    assert await mgr.recall_memory("s1", "k") is None
    later = datetime.now(UTC) + timedelta(hours=1)
    revived = await mgr.update_memory("s1", memory.id, {"expires_at": later})
    assert revived is not None and revived.expires_at == later
    assert await mgr.recall_memory("s1", "k") is not None


async def test_search_by_user_spans_sessions_and_only_that_user(mgr: SessionManager) -> None:
    await mgr.store_memory("s1", mem("a", "tea", importance=0.2), user_id="alice")
    await mgr.store_memory("s2", mem("b", "tea", session_id="s2", importance=0.7), user_id="alice")
    await mgr.store_memory("s3", mem("c", "tea", session_id="s3"), user_id="bob")
    found = await mgr.search_memories_by_user("alice", "tea", limit=10)
    assert [(m.session_id, m.key) for m in found] == [("s2", "b"), ("s1", "a")]
    assert [m.key for m in await mgr.search_memories_by_user("bob", "tea")] == ["c"]
    assert await mgr.search_memories_by_user("carol", "tea") == []
    with pytest.raises(ValueError, match="user_id"):
        await mgr.search_memories_by_user("", "tea")


async def test_store_memory_fills_in_and_checks_the_owner(mgr: SessionManager) -> None:
    await mgr.store_memory("s1", mem("k"), user_id="alice")
    recalled = await mgr.recall_memory("s1", "k")
    assert recalled is not None and recalled.user_id == "alice"
    with pytest.raises(ValueError, match="owned by another user"):
        await mgr.store_memory("s1", mem("x", user_id="bob"), user_id="alice")
    with pytest.raises(ValueError, match="held by another user"):
        await mgr.store_memory("s1", mem("k"), user_id="bob")
    with pytest.raises(ValueError, match="belongs to session"):
        await mgr.store_memory("s1", mem("k", session_id="s2"))
    recalled = await mgr.recall_memory("s1", "k")
    assert recalled is not None and recalled.user_id == "alice"


async def test_only_the_owner_may_update_or_delete(mgr: SessionManager) -> None:
    memory = mem("k", "original", user_id="alice")
    await mgr.store_memory("s1", memory)
    assert await mgr.update_memory("s1", memory.id, {"value": "hacked"}, user_id="bob") is None
    assert await mgr.delete_memory("s1", memory.id, user_id="bob") is False
    recalled = await mgr.recall_memory("s1", "k")
    assert recalled is not None and recalled.value == "original"
    assert await mgr.update_memory("s1", "no-such-id", {"value": "x"}) is None
    assert await mgr.delete_memory("s1", "no-such-id") is False
    assert await mgr.delete_memory("s1", memory.id, user_id="alice") is True
    assert await mgr.delete_memory("s1", memory.id, user_id="alice") is False


@pytest.mark.parametrize(
    "updates", [{"key": "renamed"}, {"user_id": "bob"}, {"session_id": "s2"}, {"id": "x"}]
)
async def test_update_memory_changes_only_content_fields(
    mgr: SessionManager, updates: dict[str, str]
) -> None:
    memory = mem("k")
    await mgr.store_memory("s1", memory)
    with pytest.raises(ValueError, match="cannot change"):
        await mgr.update_memory("s1", memory.id, updates)


async def test_update_memory_validates_new_values(mgr: SessionManager) -> None:
    memory = mem("k")
    await mgr.store_memory("s1", memory)
    with pytest.raises(ValidationError):
        await mgr.update_memory("s1", memory.id, {"importance": 2.0})
    updated = await mgr.update_memory(
        "s1",
        memory.id,
        {"value": "new", "categories": ["c"], "metadata": {"n": 1}, "source_agent": "researcher"},
    )
    assert updated is not None
    assert (updated.value, updated.categories, updated.metadata, updated.source_agent) == (
        "new",
        ["c"],
        {"n": 1},
        "researcher",
    )


async def test_list_memories_pages_survive_deletions(mgr: SessionManager) -> None:
    stored = [mem(f"k{i}") for i in range(5)]
    for memory in stored:
        await mgr.store_memory("s1", memory)
    first = await mgr.list_memories("s1", limit=2)
    assert [m.key for m in first.items] == ["k0", "k1"] and first.has_more
    await mgr.delete_memory("s1", stored[0].id)
    await mgr.delete_memory("s1", stored[2].id)
    second = await mgr.list_memories("s1", cursor=first.next_cursor, limit=2)
    assert [m.key for m in second.items] == ["k3", "k4"] and not second.has_more
    assert second.next_cursor is None
    with pytest.raises(ValueError, match="cursor"):
        await mgr.list_memories("s1", cursor="-3")


# -- lifecycle ---------------------------------------------------------------------------


async def test_clear_session_removes_only_that_session(mgr: SessionManager) -> None:
    for sid in ("s1", "s2"):
        await mgr.save_messages(sid, [msg("hi", session_id=sid)])
        await mgr.save_summary(sid, Summary(session_id=sid, content="sum"))
        await mgr.store_memory(sid, mem("k", "tea", session_id=sid), user_id="alice")
    assert await mgr.health_check() == {"status": "ok", "sessions": 2}
    await mgr.clear_session("s1")
    assert await mgr.get_messages("s1") == []
    assert await mgr.get_summary("s1") is None
    assert await mgr.recall_memory("s1", "k") is None
    assert [m.session_id for m in await mgr.search_memories_by_user("alice", "tea")] == ["s2"]
    assert len(await mgr.get_messages("s2")) == 1
    assert await mgr.health_check() == {"status": "ok", "sessions": 1}
    await mgr.save_messages("s1", [msg("again")])  # a cleared session can be used again
    assert contents(await mgr.get_messages("s1")) == ["again"]


async def test_every_shipped_manager_implements_all_13_methods(mgr: SessionManager) -> None:
    assert mgr.get_capabilities() == ALL_13


async def test_a_closed_manager_refuses_calls_and_reports_closed(mgr: SessionManager) -> None:
    await mgr.save_messages("s1", [msg("hi")])
    async with mgr:
        pass
    assert mgr.is_closed
    assert await mgr.health_check() == {"status": "closed", "sessions": 0}
    calls = [
        mgr.save_messages("s1", [msg("x")]),
        mgr.get_messages("s1"),
        mgr.clear_session("s1"),
        mgr.save_summary("s1", Summary(session_id="s1", content="x")),
        mgr.get_summary("s1"),
        mgr.store_memory("s1", mem("k")),
        mgr.recall_memory("s1", "k"),
        mgr.search_memories("s1", "k"),
        mgr.search_memories_by_user("alice", "k"),
        mgr.get_messages_paginated("s1"),
        mgr.update_memory("s1", "id", {}),
        mgr.delete_memory("s1", "id"),
        mgr.list_memories("s1"),
    ]
    for call in calls:
        with pytest.raises(RuntimeError, match="closed"):
            await call
    await mgr.close()


async def test_many_tasks_on_one_session_lose_nothing(mgr: SessionManager) -> None:
    async def chat(n: int) -> None:
        for i in range(5):
            await mgr.save_messages("s1", [msg(f"{n}-{i}")])
        await mgr.store_memory("s1", mem(f"fact-{n}", importance=n / 20), user_id="alice")

    await asyncio.gather(*(chat(n) for n in range(20)))
    messages = await mgr.get_messages("s1", limit=1000)
    assert len(messages) == 100
    for n in range(20):  # each task's messages stay in its own order
        mine = [m.content for m in messages if m.content.startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(5)]
    page = await mgr.list_memories("s1", limit=100)
    assert len(page.items) == 20
    top = await mgr.search_memories("s1", "fact", limit=3)
    assert [m.key for m in top] == ["fact-19", "fact-18", "fact-17"]

    memory = top[0]
    bumps = [
        mgr.update_memory("s1", memory.id, {"metadata": {"bump": i}}, user_id="alice")
        for i in range(10)
    ]
    results = await asyncio.gather(*bumps)
    assert all(r is not None for r in results)
    assert len((await mgr.list_memories("s1", limit=100)).items) == 20
