"""Session stores and WorkerSession: schema, history, binding, reasoning, streaming, restarts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deskwork import ContextLimitError, Desk, EventLoopRunningError, Worker
from deskwork.store import InMemorySessionStore, SQLiteSessionStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, fail, reply
from deskwork.tools import tool

MODEL = "scripted/model"


def _desk(tmp_path: Path, *turns: Any, **kwargs: Any) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    return Desk(model=MODEL, adapter=adapter, storage_dir=tmp_path, **kwargs), adapter


# --------------------------------------------------------------------------- stores


def test_sqlite_session_schema_matches_the_docs(tmp_path: Path) -> None:
    SQLiteSessionStore(tmp_path / "s.db")
    conn = sqlite3.connect(tmp_path / "s.db")
    columns = {
        table: [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        for table in ("sessions", "session_messages")
    }
    assert columns["sessions"] == ["id", "worker_name", "metadata", "created_at", "updated_at"]
    assert columns["session_messages"] == ["id", "session_id", "message_json", "timestamp"]
    fks = list(conn.execute("PRAGMA foreign_key_list(session_messages)"))
    assert fks and fks[0][2] == "sessions" and fks[0][6] == "CASCADE"


# --------------------------------------------------------------------------- sessions


def test_session_accumulates_history_across_turns(tmp_path: Path) -> None:
    desk, adapter = _desk(tmp_path, reply("Hello Alice"), reply("Your name is Alice"))
    worker = Worker(name="Assistant", instructions="You are helpful")
    session = desk.session(worker)
    assert session is not None and len(session.session_id) == 32
    first = session.run("Hello, I'm Alice")
    second = session.run("What's my name?")
    assert (first.content, second.content) == ("Hello Alice", "Your name is Alice")
    sent = adapter.calls[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0]["content"] == "You are helpful"  # instructions are not duplicated
    assert [m.content for m in session.history()] == [
        "Hello, I'm Alice",
        "Hello Alice",
        "What's my name?",
        "Your name is Alice",
    ]
    assert all(m.role != "system" for m in session.history())


def test_session_with_id_and_metadata_and_close(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path, reply("hi"))
    worker = Worker(name="Assistant")
    session = desk.session(
        worker=worker, session_id="user-123", metadata={"user_id": "123", "topic": "support"}
    )
    assert session is not None and session.session_id == "user-123"
    record = desk.session_store.get_session("user-123")
    assert record is not None and record.metadata == {"user_id": "123", "topic": "support"}
    session.run("hello")
    assert len(session.history()) == 2
    session.close()
    assert desk.session_store.get_session("user-123") is None and session.history() == []


def test_session_is_bound_to_its_worker(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path)
    session = desk.session(Worker(name="worker1"))
    assert session is not None
    assert desk.session(Worker(name="worker2"), session_id=session.session_id) is None
    assert desk.session(Worker(name="worker1"), session_id=session.session_id) is not None


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_session_persists_across_desk_instances(tmp_path: Path, database_url: str) -> None:
    desk, _ = _desk(tmp_path, reply("noted"), database_url=database_url)
    worker = Worker(name="Assistant")
    session = desk.session(worker, session_id="ticket:1")
    assert session is not None
    session.run("remember 42")
    desk.close()
    desk2, adapter2 = _desk(tmp_path, reply("it was 42"), database_url=database_url)
    restored = desk2.session(Worker(name="Assistant"), session_id="ticket:1")
    assert restored is not None
    assert [m.content for m in restored.history()] == ["remember 42", "noted"]
    report = restored.run("what was it?")
    assert report.content == "it was 42"
    assert [m["content"] for m in adapter2.calls[0]["messages"]] == [
        "remember 42",
        "noted",
        "what was it?",
    ]
    desk2.close()


def test_reasoning_cleared_between_turns_but_kept_on_tool_call_messages(tmp_path: Path) -> None:
    @tool()
    def lookup(q: str) -> str:
        return "found"

    turns = [
        Turn(tool_calls=[("lookup", {"q": "x"})], reasoning="need to look it up"),
        reply("answer one", reasoning="final reasoning"),
        reply("answer two", reasoning="second reasoning"),
    ]
    desk, adapter = _desk(tmp_path, *turns)
    session = desk.session(Worker(name="w", tools=[lookup]))
    assert session is not None
    first = session.run("q1", thinking={"type": "enabled"})
    assert first.reasoning_content == "final reasoning"
    # within the turn, the tool-call message carried its reasoning to the provider
    assert adapter.calls[1]["messages"][1]["reasoning_content"] == "need to look it up"
    history = session.history()
    tool_turn = next(m for m in history if m.tool_calls)
    assert tool_turn.reasoning_content == "need to look it up"
    for message in history:
        if message.role == "assistant" and not message.tool_calls:
            assert message.reasoning_content is None and message.thinking_blocks is None
    second = session.run("q2")
    assert second.reasoning_content == "second reasoning"
    assert "reasoning_content" not in adapter.calls[2]["messages"][3]  # "answer one" cleared


def test_failed_turn_keeps_the_last_good_history(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path, reply("ok"), fail(RuntimeError("provider down")))
    session = desk.session(Worker(name="w"))
    assert session is not None
    session.run("one")
    report = session.run("two")
    assert report.status == "failed"
    assert [m.content for m in session.history()] == ["one", "ok"]


def test_session_saves_compacted_history(tmp_path: Path) -> None:
    turns = [reply(f"a{i}") for i in range(4)]
    turns += [fail(ContextLimitError("context length exceeded")), reply("SUMMARY"), reply("a4")]
    desk, _ = _desk(tmp_path, *turns)
    session = desk.session(Worker(name="w"))
    assert session is not None
    for i in range(5):
        session.run(f"q{i}")
    history = session.history()
    # the kept messages start with a reply (a2): the summary is the user's (Anthropic's rule)
    assert history[0].role == "user" and "SUMMARY" in str(history[0].content)
    assert history[1].role == "assistant"
    assert [m.content for m in history[-2:]] == ["q4", "a4"]
    assert len(history) < 10


def test_session_pause_and_resume_saves_history(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return f"did {x}"

    desk, _ = _desk(tmp_path, call_tool("act", x="it"), reply("all done"))
    session = desk.session(Worker(name="w", tools=[act]))
    assert session is not None
    paused = session.run("do it")
    assert paused.status == "paused"
    done = session.resume(paused, True)
    assert done.status == "completed"
    assert [m.role for m in session.history()] == ["user", "assistant", "tool", "assistant"]


def test_session_options_and_unknown_options(tmp_path: Path) -> None:
    desk, adapter = _desk(tmp_path, reply("x"))
    session = desk.session(Worker(name="w"))
    assert session is not None
    session.run(
        "q", thinking={"type": "enabled"}, drop_params=True, extra_body={"custom_setting": 42}
    )
    call = adapter.calls[0]
    assert call["thinking"] == {"type": "enabled"} and call["drop_params"] is True
    assert call["extra_body"] == {"custom_setting": 42}
    with pytest.raises(TypeError, match="temperature"):
        session.run("q", temperature=0.3)


def test_stream_run_yields_tokens_in_real_time(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path, reply("Once upon a time"))
    session = desk.session(Worker(name="w"))
    assert session is not None
    events = list(session.stream_run("Tell me a story"))
    tokens = [e.payload["token"] for e in events if e.type == "stream.token"]
    assert "".join(tokens) == "Once upon a time"
    assert [e.type for e in events][-2:] == ["worker.completed", "run.completed"]
    assert [m.content for m in session.history()] == ["Tell me a story", "Once upon a time"]


async def test_astream_run_yields_tokens(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path, reply("one two three"))
    session = desk.session(Worker(name="w"))
    assert session is not None
    tokens = [
        e.payload["token"] async for e in session.astream_run("Count") if e.type == "stream.token"
    ]
    assert "".join(tokens) == "one two three"
    assert len(session.history()) == 2


async def test_session_arun_and_sync_run_in_loop(tmp_path: Path) -> None:
    desk, _ = _desk(tmp_path, reply("async hi"), reply("streamed reply"))
    session = desk.session(Worker(name="w"))
    assert session is not None
    assert (await session.arun("Hello")).content == "async hi"
    report = await session.arun("again", stream=True)
    assert [e.payload["token"] for e in report.events if e.type == "stream.token"]
    with pytest.raises(EventLoopRunningError):
        session.run("sync inside loop")


def test_in_memory_session_store_on_desk(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    desk, _ = _desk(tmp_path, reply("x"), session_store=store)
    session = desk.session(Worker(name="w"), session_id="mem")
    assert session is not None
    session.run("hi")
    assert [m.content for m in store.get_messages("mem")] == ["hi", "x"]
    assert desk.session_store is store


def test_sync_session_run_and_stream_run_finish_async_handlers(tmp_path: Path) -> None:
    import asyncio

    from deskwork import Event

    desk, _ = _desk(tmp_path, reply("a"), reply("b"))
    done: list[str] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0.02)
        done.append(event.type)

    desk.event_bus.subscribe("run.completed", handler)
    session = desk.session(Worker(name="w"))
    assert session is not None
    session.run("one")
    assert done == ["run.completed"]
    list(session.stream_run("two"))
    assert done == ["run.completed", "run.completed"]
