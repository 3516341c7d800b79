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


@pytest.fixture(params=["memory", "sqlite"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    if request.param == "memory":
        return InMemoryMemoryStore()
    return SQLiteMemoryStore(tmp_path / "memory.db")


def test_write_read_overwrite_and_scopes(memory: MemoryStore) -> None:
    memory.write("k", {"a": [1, 2]}, "worker:Analyst")
    memory.write("k", "other scope", "desk")
    assert memory.read("k", "worker:Analyst") == {"a": [1, 2]}
    assert memory.read("k", "desk") == "other scope"
    assert memory.read("missing", "desk") is None
    memory.write("k", 3, "desk")
    assert memory.read("k", "desk") == 3


def test_values_are_copies(memory: MemoryStore) -> None:
    value: dict[str, Any] = {"items": [1]}
    memory.write("k", value, "s")
    value["items"].append(2)
    read = memory.read("k", "s")
    assert read == {"items": [1]}
    read["items"].append(3)
    assert memory.read("k", "s") == {"items": [1]}


def test_search_matches_key_or_value_substrings(memory: MemoryStore) -> None:
    memory.write("doc1", "AI is transforming healthcare", "global")
    memory.write("doc2", "Machine learning predicts outcomes", "global")
    memory.write("notes", {"topic": "Healthcare costs"}, "global")
    memory.write("doc3", "healthcare elsewhere", "other")
    assert sorted(k for k, _ in memory.search("healthcare", "global")) == ["doc1", "notes"]
    assert [k for k, _ in memory.search("doc2", "global")] == ["doc2"]
    assert dict(memory.search("predicts", "global")) == {
        "doc2": "Machine learning predicts outcomes"
    }
    assert memory.search("nothing-like-this", "global") == []


def test_search_finds_non_ascii_and_literal_wildcards(memory: MemoryStore) -> None:
    memory.write("café", "crème brûlée", "s")
    memory.write("plain", "abc", "s")
    memory.write("pct", "100% done", "s")
    assert [k for k, _ in memory.search("brûlée", "s")] == ["café"]
    assert [k for k, _ in memory.search("café", "s")] == ["café"]
    assert memory.search("a_c", "s") == []  # "_" is not a wildcard
    assert [k for k, _ in memory.search("0% d", "s")] == ["pct"]
    assert memory.search("%", "s") == [("pct", "100% done")]


def test_reset_clears_one_scope(memory: MemoryStore) -> None:
    memory.write("a", 1, "s1")
    memory.write("b", 2, "s2")
    memory.reset("s1")
    assert memory.read("a", "s1") is None and memory.read("b", "s2") == 2


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
