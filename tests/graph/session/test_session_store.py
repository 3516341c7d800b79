"""StoreSessionManager over deskwork's SQLite memory store: durability and failures."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deskwork.graph.core.exceptions import SessionManagerError
from deskwork.graph.session import Memory, SessionMessage, StoreSessionManager, Summary
from deskwork.memory import ExternalMemoryStore, SQLiteMemoryStore
from deskwork.store.session import SQLiteSessionStore


def message(content: str, role: str = "user", user_id: str | None = "alice") -> SessionMessage:
    return SessionMessage(role=role, content=content, session_id="s1", user_id=user_id)  # type: ignore[arg-type]


async def test_a_new_manager_on_the_same_file_sees_everything(tmp_path: Path) -> None:
    db = tmp_path / "deskwork.db"
    first = StoreSessionManager(SQLiteMemoryStore(db))
    await first.save_messages("s1", [message("Hello"), message("Hi!", "assistant", None)])
    await first.save_summary("s1", Summary(session_id="s1", content="greetings"))
    memory = Memory(session_id="s1", key="preference", value="dark mode", importance=0.8)
    await first.store_memory("s1", memory, user_id="alice")
    await first.close()

    second = StoreSessionManager(SQLiteMemoryStore(db))
    assert [m.content for m in await second.get_messages("s1", user_id="alice")] == [
        "Hello",
        "Hi!",
    ]
    summary = await second.get_summary("s1")
    assert summary is not None and summary.content == "greetings"
    recalled = await second.recall_memory("s1", "preference")
    assert recalled is not None and recalled.id == memory.id and recalled.user_id == "alice"
    assert [m.key for m in await second.search_memories_by_user("alice", "dark")] == ["preference"]
    await second.save_messages("s1", [message("Again")])  # appends after the first writer's
    assert [m.content for m in await second.get_messages("s1")][-1] == "Again"
    assert await second.health_check() == {"status": "ok", "sessions": 1}


async def test_graph_sessions_share_the_desk_database_file(tmp_path: Path) -> None:
    db = tmp_path / ".deskwork" / "deskwork.db"
    desk_sessions = SQLiteSessionStore(db)
    desk_sessions.create_session("worker-session", "Analyst", {})
    graph_sessions = StoreSessionManager(SQLiteMemoryStore(db))
    await graph_sessions.save_messages("s1", [message("Hello")])
    assert desk_sessions.get_session("worker-session") is not None
    assert len(await graph_sessions.get_messages("s1")) == 1


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from deskwork.graph.session import Memory, SessionMessage, StoreSessionManager
    from deskwork.memory import SQLiteMemoryStore

    async def main() -> None:
        mgr = StoreSessionManager(SQLiteMemoryStore(sys.argv[1]))
        await mgr.save_messages("s1", [
            SessionMessage(role="user", content=f"turn {i}", session_id="s1", user_id="alice")
            for i in range(3)
        ])
        await mgr.store_memory(
            "s1", Memory(session_id="s1", key="plan", value="pro", importance=0.7),
            user_id="alice",
        )

    asyncio.run(main())
    """
)


async def test_a_second_process_reads_what_the_first_wrote(tmp_path: Path) -> None:
    db = tmp_path / "deskwork.db"
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(db)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    manager = StoreSessionManager(SQLiteMemoryStore(db))
    page = await manager.get_messages_paginated("s1", limit=2)
    assert [m.content for m in page.items] == ["turn 0", "turn 1"] and page.has_more
    rest = await manager.get_messages_paginated("s1", cursor=page.next_cursor, limit=2)
    assert [m.content for m in rest.items] == ["turn 2"]
    plan = await manager.recall_memory("s1", "plan")
    assert plan is not None and plan.value == "pro" and plan.user_id == "alice"


async def test_close_keeps_the_stored_data(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "deskwork.db")
    async with StoreSessionManager(store) as manager:
        await manager.save_messages("s1", [message("kept")])
    assert manager.is_closed
    reopened = StoreSessionManager(store)
    assert [m.content for m in await reopened.get_messages("s1")] == ["kept"]


async def test_a_failing_store_raises_session_manager_error() -> None:
    manager = StoreSessionManager(ExternalMemoryStore())
    with pytest.raises(SessionManagerError, match="NotImplementedError") as info:
        await manager.save_messages("s1", [message("x")])
    assert isinstance(info.value.__cause__, NotImplementedError)
    with pytest.raises(SessionManagerError):
        await manager.get_messages("s1")
    health = await manager.health_check()
    assert health["status"] == "error" and "NotImplementedError" in health["error"]


async def test_namespaces_keep_applications_apart(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "deskwork.db")
    one = StoreSessionManager(store, namespace="app1")
    two = StoreSessionManager(store, namespace="app2")
    await one.save_messages("s1", [message("one's")])
    assert await two.get_messages("s1") == []
    assert await two.health_check() == {"status": "ok", "sessions": 0}
    assert repr(one) == "StoreSessionManager(SQLiteMemoryStore, namespace='app1', closed=False)"


async def test_from_database_url_shares_the_desks_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskwork.desk import Desk
    from deskwork.graph.config.schema import ContextConfig
    from deskwork.graph.context import SlotManager, SlotTier, StoreSlotPersistence

    monkeypatch.delenv("DESKWORK_DATABASE_URL", raising=False)
    desk = Desk(storage_dir=tmp_path / ".deskwork")
    assert desk.run_store is not None  # the desk creates its database file
    sessions = StoreSessionManager.from_database_url(desk.database_url)
    await sessions.save_messages("s1", [message("Hello")])
    slots = SlotManager(
        ContextConfig(), persistence=StoreSlotPersistence.from_database_url(desk.database_url)
    )
    slots.set_shared_tiered("topic", "billing", SlotTier.SESSION)
    await slots.flush("s1")
    assert sorted(p.name for p in (tmp_path / ".deskwork").glob("*.db")) == ["deskwork.db"]

    monkeypatch.chdir(tmp_path)  # the default: SQLite at .deskwork/deskwork.db
    default = StoreSessionManager.from_database_url()
    assert [m.content for m in await default.get_messages("s1")] == ["Hello"]
    reread = SlotManager(ContextConfig(), persistence=StoreSlotPersistence.from_database_url())
    await reread.hydrate("s1")
    assert reread.shared_values() == {"topic": "billing"}
