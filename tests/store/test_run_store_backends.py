"""SQLite run store specifics (sharing, reopening, the desk default); the contract shared by
every backend is in ``test_store_contract.py``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from storekit import paused_state, sample_event

from deskwork import Desk, Job, Worker
from deskwork.memory import SQLiteMemoryStore
from deskwork.store import SQLiteRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import new_id


def test_sqlite_claim_paused_is_atomic_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    first, second = SQLiteRunStore(path), SQLiteRunStore(path)
    first.create_run("r", None)
    first.update_run("r", "paused", None, None, paused_state("r"))
    assert second.claim_paused("r") is True
    assert first.claim_paused("r") is False
    first.close()
    second.close()


def test_sqlite_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "persist.db"
    store = SQLiteRunStore(path)
    store.create_run("r", {"input": "x"})
    for n in range(5):
        store.add_event(sample_event("r", n))
    store.update_run("r", "paused", "out", {"k": "v"}, paused_state("r"))
    store.close()
    reopened = SQLiteRunStore(path)
    record = reopened.get_run("r")
    assert (
        record is not None
        and record.state == paused_state("r")
        and record.output_json == {"k": "v"}
    )
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
