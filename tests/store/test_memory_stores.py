"""Memory stores (in-memory, SQLite, external stub) and the desk's memory conventions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Job, Message, Worker
from deskwork.memory import ExternalMemoryStore, InMemoryMemoryStore, MemoryStore, SQLiteMemoryStore
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, fail, reply, structured
from deskwork.tools import tool


def test_sqlite_memory_persists_as_json(tmp_path: Path) -> None:
    class Item(BaseModel):
        name: str

    store = SQLiteMemoryStore(tmp_path / "m.db")
    store.write("item", Item(name="x"), "s")
    store.write("list", [1, "two", None], "s")
    reopened = SQLiteMemoryStore(tmp_path / "m.db")
    assert reopened.read("item", "s") == {"name": "x"}
    assert reopened.read("list", "s") == [1, "two", None]


def test_external_memory_store_stub_raises() -> None:
    stub = ExternalMemoryStore()
    for call in (
        lambda: stub.write("k", 1, "s"),
        lambda: stub.read("k", "s"),
        lambda: stub.search("q", "s"),
        lambda: stub.reset("s"),
    ):
        with pytest.raises(NotImplementedError):
            call()


# --------------------------------------------------------------------------- desk conventions


def _desk(*turns: Any, memory: MemoryStore | None = None) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    return Desk(
        model="m", adapter=adapter, run_store=InMemoryRunStore(), memory_store=memory
    ), adapter


def test_desk_has_an_in_memory_store_by_default() -> None:
    desk, _ = _desk()
    assert isinstance(desk.memory_store, InMemoryMemoryStore)


def test_context_becomes_a_system_message_after_leading_system_messages() -> None:
    memory = InMemoryMemoryStore()
    memory.write("context", "The user prefers metric units.", "analyst:session-1")
    desk, adapter = _desk(reply("ok"), memory=memory)
    worker = Worker(name="Analyst", instructions="Be brief.", memory_scope="analyst:session-1")
    history = [Message(role="system", content="Earlier note"), Message(role="user", content="u")]
    desk.run(worker, Job(input="go", initial_messages=history))
    sent = adapter.calls[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "system", "user", "user"]
    assert sent[0]["content"] == "Be brief." and sent[1]["content"] == "Earlier note"
    assert "The user prefers metric units." in sent[2]["content"]


def test_structured_context_is_serialized() -> None:
    memory = InMemoryMemoryStore()
    memory.write("context", {"facts": ["a", "b"]}, "worker:W")
    desk, adapter = _desk(reply("ok"), memory=memory)
    desk.run(Worker(name="W"), Job(input="go"))
    assert '{"facts": ["a", "b"]}' in adapter.calls[0]["messages"][0]["content"]


def test_last_output_is_written_after_completed_runs_only() -> None:
    class Out(BaseModel):
        score: int

    @tool(requires_confirmation=True)
    def act() -> str:
        return "x"

    memory = InMemoryMemoryStore()
    desk, _ = _desk(
        reply("first answer"),
        structured({"score": 3}),
        call_tool("act"),
        fail(RuntimeError("down")),
        memory=memory,
    )
    worker = Worker(name="W", tools=[act], memory_scope="custom-scope")
    desk.run(worker, Job(input="go"))
    assert memory.read("last_output", "custom-scope") == "first answer"
    plain = Worker(name="P")
    desk.run(plain, Job(input="go", response_schema=Out))
    assert memory.read("last_output", "worker:P") == {"score": 3}
    paused = desk.run(worker, Job(input="go"))
    assert paused.status == "paused"
    assert memory.read("last_output", "custom-scope") == "first answer"
    failed = desk.run(Worker(name="F"), Job(input="go"))
    assert failed.status == "failed" and memory.read("last_output", "worker:F") is None


def test_in_memory_store_keeps_its_own_copies_of_containers() -> None:
    memory = InMemoryMemoryStore()
    value = {"tags": ["a"]}
    memory.write("k", value, "s")
    value["tags"].append("changed after the write")
    read = memory.read("k", "s")
    assert read == {"tags": ["a"]}
    read["tags"].append("changed after the read")
    assert memory.read("k", "s") == {"tags": ["a"]}
    memory.write("t", "a text", "s")
    assert memory.read("t", "s") == "a text" and memory.search("text", "s") == [("t", "a text")]
