"""LangGraph checkpoints in deskwork's run store: the store's items API and RunStoreSaver."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from deskwork.graph.checkpoint import RunStoreSaver
from deskwork.store import InMemoryRunStore, RunStore
from deskwork.store.sqlite import SQLiteRunStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    made: RunStore = (
        InMemoryRunStore() if request.param == "memory" else SQLiteRunStore(tmp_path / "d.db")
    )
    yield made
    made.close()


def test_items_are_ordered_by_key_and_filtered_by_prefix(store: RunStore) -> None:
    store.put_checkpoint_items("t", [("a\x1fc\x1f2", b"two"), ("a\x1fc\x1f1", b"one")])
    store.put_checkpoint_items("t", [("b\x1fc\x1f1", b"other ns"), ("a\x1fw\x1f1", b"w")])
    store.put_checkpoint_items("u", [("a\x1fc\x1f9", b"other thread")])
    assert store.get_checkpoint_items("t", "a\x1fc\x1f") == [
        ("a\x1fc\x1f1", b"one"),
        ("a\x1fc\x1f2", b"two"),
    ]
    newest = store.get_checkpoint_items("t", "a\x1fc\x1f", newest_first=True, limit=1)
    assert newest == [("a\x1fc\x1f2", b"two")]
    assert len(store.get_checkpoint_items("t")) == 4
    assert store.get_checkpoint_items("nobody") == []


def test_overwrite_false_keeps_the_first_value_and_delete_forgets_a_thread(
    store: RunStore,
) -> None:
    store.put_checkpoint_items("t", [("k", b"first")])
    store.put_checkpoint_items("t", [("k", b"second")], overwrite=False)
    assert store.get_checkpoint_items("t") == [("k", b"first")]
    store.put_checkpoint_items("t", [("k", b"third")])
    assert store.get_checkpoint_items("t") == [("k", b"third")]
    store.put_checkpoint_items("u", [("k", b"kept")])
    store.delete_checkpoint_items("t")
    assert store.get_checkpoint_items("t") == []
    assert store.get_checkpoint_items("u") == [("k", b"kept")]


def test_sqlite_checkpoints_survive_reopening_the_file(tmp_path: Path) -> None:
    first = SQLiteRunStore(tmp_path / "d.db")
    first.put_checkpoint_items("t", [("k", b"\x00\xffbinary")])
    first.close()
    again = SQLiteRunStore(tmp_path / "d.db")
    assert again.get_checkpoint_items("t") == [("k", b"\x00\xffbinary")]
    again.close()


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(saver: RunStoreSaver) -> Any:
    def first(state: Log) -> dict[str, Any]:
        return {"log": ["first"]}

    def ask(state: Log) -> dict[str, Any]:
        return {"log": [f"answer:{interrupt('why?')}"]}

    builder = StateGraph(Log)
    builder.add_node("first", first)
    builder.add_node("ask", ask)
    builder.add_edge(START, "first")
    builder.add_edge("first", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


async def test_saver_backs_interrupt_and_resume_of_a_plain_graph(store: RunStore) -> None:
    config: Any = {"configurable": {"thread_id": "run-1"}}
    graph = _graph(RunStoreSaver(store))
    first = await graph.ainvoke({"log": []}, config)
    assert first["__interrupt__"][0].value == "why?"
    # a new saver over the same store (as a new process would have) continues the thread
    result = await _graph(RunStoreSaver(store)).ainvoke(Command(resume="because"), config)
    assert result == {"log": ["first", "answer:because"]}
    history = [snap.metadata["step"] for snap in graph.get_state_history(config)]
    assert history == sorted(history, reverse=True) and len(history) >= 4


def test_list_filters_by_before_limit_and_metadata(store: RunStore) -> None:
    saver = RunStoreSaver(store)
    base: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    ids = []
    parent = base
    for step in range(3):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"log": [str(step)]}
        parent = saver.put(parent, checkpoint, {"step": step, "source": "loop"}, {})
        ids.append(checkpoint["id"])
    listed = [t.checkpoint["id"] for t in saver.list(base)]
    assert listed == list(reversed(ids))
    assert [t.checkpoint["id"] for t in saver.list(base, limit=1)] == [ids[2]]
    before: Any = {"configurable": {"thread_id": "t", "checkpoint_id": ids[2]}}
    assert [t.checkpoint["id"] for t in saver.list(base, before=before)] == [ids[1], ids[0]]
    assert [t.metadata["step"] for t in saver.list(base, filter={"step": 1})] == [1]
    latest = saver.get_tuple(base)
    assert latest is not None and latest.checkpoint["channel_values"] == {"log": ["2"]}
    assert latest.parent_config is not None
    assert latest.parent_config["configurable"]["checkpoint_id"] == ids[1]
    exact: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": ids[0]}}
    found = saver.get_tuple(exact)
    assert found is not None and found.parent_config is None
    missing: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "x"}}
    assert saver.get_tuple(missing) is None
    saver.delete_thread("t")
    assert saver.get_tuple(base) is None


def test_writes_keep_their_order_and_special_channels_replace(store: RunStore) -> None:
    saver = RunStoreSaver(store)
    checkpoint = empty_checkpoint()
    config = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, checkpoint, {}, {}
    )
    messages = [HumanMessage(content="hi", id="m1"), AIMessage(content="yo", id="m2")]
    saver.put_writes(config, [("messages", messages), ("log", "b")], "task-b", "path-b")
    saver.put_writes(config, [("log", "a")], "task-a", "path-a")
    saver.put_writes(config, [("log", "ignored")], "task-a", "path-a")  # same idx: kept first
    saver.put_writes(config, [("__error__", "one")], "task-c", "path-c")
    saver.put_writes(config, [("__error__", "two")], "task-c", "path-c")  # special: replaced
    found = saver.get_tuple(config)
    assert found is not None and found.pending_writes is not None
    pending = found.pending_writes
    assert [(t, c) for t, c, _ in pending] == [
        ("task-a", "log"),
        ("task-b", "messages"),
        ("task-b", "log"),
        ("task-c", "__error__"),
    ]
    assert pending[0][2] == "a" and pending[3][2] == "two"
    assert [m.content for m in pending[1][2]] == ["hi", "yo"]
    assert isinstance(pending[1][2][1], AIMessage)


def test_list_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="thread_id"):
        list(RunStoreSaver(InMemoryRunStore()).list(None))


async def test_subgraph_interrupts_behave_as_with_langgraphs_own_saver(store: RunStore) -> None:
    def inner(state: Log) -> dict[str, Any]:
        return {"log": ["inner:" + interrupt("inner?")]}

    def before(state: Log) -> dict[str, Any]:
        return {"log": ["before"]}

    sub = StateGraph(Log)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    outer = StateGraph(Log)
    outer.add_node("before", before)
    outer.add_node("sub", sub.compile())
    outer.add_edge(START, "before")
    outer.add_edge("before", "sub")
    outer.add_edge("sub", END)

    results = []
    for saver in (InMemorySaver(), RunStoreSaver(store)):
        graph = outer.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "nested"}}
        paused = await graph.ainvoke({"log": []}, config)
        assert paused["__interrupt__"][0].value == "inner?"
        final = await graph.ainvoke(Command(resume="yes"), config)
        history = [(s.metadata or {}).get("step") for s in graph.get_state_history(config)]
        results.append((final, history))
    assert results[0] == results[1]
    namespaces = {key.split("\x1f")[0] for key, _ in store.get_checkpoint_items("nested")}
    assert "" in namespaces and any(ns.startswith("sub:") for ns in namespaces)
