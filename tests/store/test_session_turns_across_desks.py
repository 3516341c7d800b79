"""Turns of one session saved at once by two desks (two processes on one database), and a
turn sent while another is paused: every turn's messages are kept, none overwrites another."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.core.message import Message
from deskwork.runtime.session import _merge
from deskwork.store import InMemorySessionStore, SessionStore, SQLiteSessionStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

MODEL = "scripted/model"


class _Together(BaseModelAdapter):
    """Answers each message with its echo, once every desk's turn has read its history (both
    turns then start from the same history, as two processes' turns sent at once do)."""

    def __init__(self, arrived: list[int], both: asyncio.Event) -> None:
        self.arrived, self.both = arrived, both

    async def acomplete(self, *, messages: list[dict[str, Any]], **_: Any) -> ModelResponse:
        self.arrived.append(1)
        if len(self.arrived) == 2:
            self.both.set()
        await self.both.wait()
        return ModelResponse(content=f"echo {messages[-1]['content']}")


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_turns_saved_at_once_by_two_desks_are_both_kept(
    tmp_path: Path, database_url: str
) -> None:
    arrived: list[int] = []
    both = asyncio.Event()
    desks = [
        Desk(
            model=MODEL,
            adapter=_Together(arrived, both),
            storage_dir=tmp_path / name,
            database_url=database_url,
        )
        for name in ("a", "b")
    ]
    worker = Worker(name="Assistant")
    sessions = [desk.session(worker, session_id="chat:1") for desk in desks]
    assert sessions[0] is not None and sessions[1] is not None
    await asyncio.gather(sessions[0].arun("first"), sessions[1].arun("second"))
    history = [m.content for m in sessions[0].history()]
    assert sorted(history) == ["echo first", "echo second", "first", "second"]
    assert history.index("echo first") == history.index("first") + 1  # each turn together
    assert history.index("echo second") == history.index("second") + 1
    for desk in desks:
        desk.close()


def test_a_turn_sent_while_another_is_paused_is_kept_when_it_resumes(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return f"did {x}"

    adapter = ScriptedAdapter([call_tool("act", x="it"), reply("meanwhile"), reply("all done")])
    desk = Desk(model=MODEL, adapter=adapter, storage_dir=tmp_path)
    session = desk.session(Worker(name="w", tools=[act]))
    assert session is not None
    paused = session.run("do it")
    assert paused.status == "paused"
    assert session.run("and this?").content == "meanwhile"
    sent = adapter.calls[1]["messages"]  # no call without its answer: providers refuse one
    assert [(m["role"], m["content"]) for m in sent] == [("user", "do it"), ("user", "and this?")]
    assert session.resume(paused, True).status == "completed"
    history = session.history()
    assert [(m.role, m.content) for m in history][2:] == [
        ("tool", "did it"),  # right after the call it answers
        ("assistant", "all done"),
        ("user", "and this?"),
        ("assistant", "meanwhile"),
    ]
    assert history[1].tool_calls is not None
    desk.close()


def _msgs(*texts: str) -> list[Message]:
    return [Message(role="user" if t.startswith("u") else "assistant", content=t) for t in texts]


def test_a_turn_that_compacted_the_history_keeps_what_others_added() -> None:
    base = _msgs("u1", "a1", "u2", "a2")
    ours = _msgs("asummary", "u3", "a3")  # compacted: does not start with base
    current = [*base, *_msgs("u4", "a4")]
    assert _merge(base, ours, current, "s") == [*ours, *_msgs("u4", "a4")]


def test_a_turn_after_another_compacted_goes_after_its_summary() -> None:
    base = _msgs("u1", "a1")
    ours = [*base, *_msgs("u3", "a3")]
    current = _msgs("asummary", "u4", "a4")
    assert _merge(base, ours, current, "s") == [*current, *_msgs("u3", "a3")]


def test_two_turns_that_both_compacted_keep_the_later(caplog: pytest.LogCaptureFixture) -> None:
    base = _msgs("u1", "a1")
    ours, current = _msgs("asummary", "u3"), _msgs("aother", "u4")
    assert _merge(base, ours, current, "chat:9") == ours
    assert "chat:9" in caplog.text


def test_default_update_messages_of_a_custom_store_reads_then_replaces() -> None:
    class Plain(InMemorySessionStore):
        update_messages = SessionStore.update_messages  # the default, not the override

    store = Plain()
    store.create_session("s", "w", {})
    store.replace_messages("s", _msgs("u1"))
    store.update_messages("s", lambda current: [*current, *_msgs("a1")])
    assert [m.content for m in store.get_messages("s")] == ["u1", "a1"]
    with pytest.raises(KeyError):
        store.update_messages("missing", lambda current: current)


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_replace_overwrites_a_history_it_cannot_read(tmp_path: Path, database_url: str) -> None:
    """A history damaged in place can still be replaced (an update has to read it; a
    replace never did)."""
    store = _session_store(database_url, tmp_path)
    store.create_session("s", "w", {})
    store.replace_messages("s", _msgs("u1"))
    _damage_messages(database_url, tmp_path)
    store.replace_messages("s", _msgs("ufresh"))
    assert [m.content for m in store.get_messages("s")] == ["ufresh"]
    store.close()


def _session_store(database_url: str, tmp_path: Path) -> SessionStore:
    if database_url.startswith("sqlite"):
        return SQLiteSessionStore(tmp_path / "deskwork.db")
    from deskwork.store.postgres import PostgresSessionStore

    return PostgresSessionStore(database_url)


def _damage_messages(database_url: str, tmp_path: Path) -> None:
    if database_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(tmp_path / "deskwork.db") as conn:
            conn.execute("UPDATE session_messages SET message_json='{bad'")
        return
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE deskwork_session_messages SET message_json='{bad' WHERE session_id='s'"
        )


def test_a_turn_sent_after_two_overlapped_a_pause_keeps_the_paused_call(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return f"did {x}"

    turns = [call_tool("act", x="it"), reply("one"), reply("two"), reply("all done")]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path)
    session = desk.session(Worker(name="w", tools=[act]))
    assert session is not None
    paused = session.run("do it")
    session.run("first?")
    session.run("second?")
    assert session.resume(paused, True).status == "completed"
    assert [(m.role, m.content) for m in session.history()][1:] == [
        ("assistant", None),
        ("tool", "did it"),
        ("assistant", "all done"),
        ("user", "first?"),
        ("assistant", "one"),
        ("user", "second?"),
        ("assistant", "two"),
    ]
    desk.close()


def test_a_tool_result_whose_call_was_summarized_is_not_sent() -> None:
    from deskwork.core.tool_call import ToolCall
    from deskwork.runtime.session import _without_open_calls

    call = ToolCall(id="c1", name="act", arguments={})
    history = [
        Message(role="assistant", content="summary"),
        Message(role="tool", content="did it", tool_call_id="c0"),  # its call: summarized
        Message(role="assistant", content=None, tool_calls=[call]),
        Message(role="tool", content="ok", tool_call_id="c1"),
        Message(role="assistant", content="done"),
    ]
    assert _without_open_calls(history) == [history[0], *history[2:]]
