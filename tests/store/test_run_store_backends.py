"""Run stores: SQLite and in-memory round trips, ordering, list_runs, atomic claim_paused."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Event, Job, Message, PendingAction, RunState, ToolCall, Worker
from deskwork.memory import SQLiteMemoryStore
from deskwork.store import InMemoryRunStore, RunStore, SQLiteRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import ToolResult, tool
from deskwork.utils import new_id, utc_now


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    made: RunStore = (
        InMemoryRunStore() if request.param == "memory" else SQLiteRunStore(tmp_path / "runs.db")
    )
    yield made
    made.close()


def _state(run_id: str, status: Any = "paused") -> RunState:
    call = ToolCall(
        id="c1",
        name="delete",
        arguments={"path": "x"},
        result=ToolResult(content="done", data={"n": 1}),
    )
    return RunState(
        run_id=run_id,
        status=status,
        runner_type="worker",
        runner_name="w",
        job={"input": "hi", "metadata": {"k": 1}},
        messages=[Message(role="user", content="hi"), Message(role="assistant", tool_calls=[call])],
        tool_calls=[call],
        pending_action=PendingAction(
            action_id="a",
            type="confirmation",
            tool_call=call,
            prompt="ok?",
            options=["approve", "decline"],
        ),
        metrics={"llm_calls": 1, "latency_ms": 1.5},
        iteration=2,
        payload={"nested": {"x": [1]}},
    )


def _event(run_id: str, n: int) -> Event:
    return Event(
        event_id=new_id(),
        type=f"custom.{n}",
        timestamp=utc_now(),
        run_id=run_id,
        source="s",
        payload={"n": n, "text": "é ✓"},
    )


def test_run_round_trip(store: RunStore) -> None:
    store.create_run("r1", {"input": "hi", "list": [1, 2]})
    record = store.get_run("r1")
    assert record is not None and record.status == "running" and record.state is None
    assert record.input == {"input": "hi", "list": [1, 2]}
    assert record.created_at.tzinfo is not None
    state = _state("r1")
    store.update_run("r1", "paused", "partial", {"data": [1, "two"]}, state)
    record = store.get_run("r1")
    assert record is not None
    assert (record.status, record.output, record.output_json) == (
        "paused",
        "partial",
        {"data": [1, "two"]},
    )
    assert record.state == state
    assert record.updated_at >= record.created_at
    assert store.get_run("missing") is None
    with pytest.raises(KeyError):
        store.update_run("missing", "failed", None, None, None)


def test_events_keep_insertion_order_per_run(store: RunStore) -> None:
    store.create_run("a", None)
    store.create_run("b", None)
    written = []
    for n in range(30):
        event = _event("a" if n % 3 else "b", n)
        written.append(event)
        store.add_event(event)
    got = store.get_events("a")
    assert [e.event_id for e in got] == [e.event_id for e in written if e.run_id == "a"]
    assert got[0].payload == written[1].payload and got[0].timestamp == written[1].timestamp
    assert store.get_events("nobody") == []


def test_list_runs_most_recent_first_with_limit(store: RunStore) -> None:
    for run_id in ("one", "two", "three"):
        store.create_run(run_id, None)
        time.sleep(0.002)
    store.update_run("one", "completed", "x", None, None)
    runs = store.list_runs()
    assert [r.run_id for r in runs] == ["one", "three", "two"]
    assert [r.run_id for r in store.list_runs(limit=2)] == ["one", "three"]


def test_claim_paused_only_once(store: RunStore) -> None:
    store.create_run("r", None)
    assert not store.claim_paused("r")  # running, not paused
    store.update_run("r", "paused", None, None, _state("r"))
    assert store.claim_paused("r")
    assert not store.claim_paused("r")
    record = store.get_run("r")
    assert record is not None and record.status == "running" and record.state is not None
    assert not store.claim_paused("missing")


def test_claim_paused_is_atomic_across_threads(store: RunStore) -> None:
    store.create_run("r", None)
    store.update_run("r", "paused", None, None, _state("r"))
    wins: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        wins.append(store.claim_paused("r"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_sqlite_claim_paused_is_atomic_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    first, second = SQLiteRunStore(path), SQLiteRunStore(path)
    first.create_run("r", None)
    first.update_run("r", "paused", None, None, _state("r"))
    assert second.claim_paused("r") is True
    assert first.claim_paused("r") is False
    first.close()
    second.close()


def test_sqlite_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "persist.db"
    store = SQLiteRunStore(path)
    store.create_run("r", {"input": "x"})
    for n in range(5):
        store.add_event(_event("r", n))
    store.update_run("r", "paused", "out", {"k": "v"}, _state("r"))
    store.close()
    reopened = SQLiteRunStore(path)
    record = reopened.get_run("r")
    assert record is not None and record.state == _state("r") and record.output_json == {"k": "v"}
    assert [e.type for e in reopened.get_events("r")] == [f"custom.{n}" for n in range(5)]
    assert reopened.path == path
    reopened.close()


def test_desk_default_storage_is_sqlite_under_storage_dir(tmp_path: Path) -> None:
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("x")]), storage_dir=tmp_path / "dir")
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert isinstance(desk.run_store, SQLiteRunStore)
    assert desk.run_store.path == tmp_path / "dir" / "deskwork.db"
    other = SQLiteRunStore(tmp_path / "dir" / "deskwork.db")
    record = other.get_run(report.run_id)
    assert record is not None and record.status == "completed" and record.output == "x"
    assert [e.type for e in other.get_events(report.run_id)] == [e.type for e in report.events]
    assert [r.run_id for r in other.list_runs()] == [report.run_id]


def test_memory_store_on_the_run_store_file_does_not_lock(tmp_path: Path) -> None:
    """A SQLite memory store sharing the desk's database file writes ``last_output`` while the
    run store is writing events: neither may wait on the other's open transaction."""
    memory = SQLiteMemoryStore(tmp_path / "deskwork.db")
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([reply("hello")]),
        storage_dir=tmp_path,
        memory_store=memory,
    )
    started = time.perf_counter()
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert report.status == "completed", report.errors
    assert time.perf_counter() - started < 2.0
    assert memory.read("last_output", "worker:w") == "hello"


async def test_other_writers_are_not_blocked_while_a_run_waits(tmp_path: Path) -> None:
    """Another process (here: another connection on a thread) can start runs on the same
    database while a run sits in a slow tool."""
    path = tmp_path / "deskwork.db"
    timings: list[float] = []

    @tool()
    async def slow(x: int) -> str:
        await asyncio.sleep(0.2)  # the run is idle here, mid-run

        def other_process() -> None:
            other = SQLiteRunStore(path)
            started = time.perf_counter()
            other.create_run(new_id(), {"input": "elsewhere"})
            timings.append(time.perf_counter() - started)
            other.close()

        await asyncio.to_thread(other_process)
        return "ok"

    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([call_tool("slow", x=1), reply("done")]),
        storage_dir=tmp_path,
    )
    report = await desk.arun(Worker(name="w", tools=[slow]), Job(input="go"))
    assert report.status == "completed", report.errors
    assert timings and timings[0] < 0.5, timings
