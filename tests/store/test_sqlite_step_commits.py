"""SQLite run store: events are committed one transaction per step (issue 13), and a step is
on disk before the run waits on the next one."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from storekit import numbered_event

from deskwork.store import SQLiteRunStore


def _raw_count(path: Path) -> int:
    reader = sqlite3.connect(path)
    try:
        return int(reader.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    finally:
        reader.close()


def test_events_of_a_step_are_committed_when_the_loop_gets_control(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    store = SQLiteRunStore(path)
    store.create_run("r", None)

    async def step() -> tuple[int, int]:
        for n in range(3):
            store.add_event(numbered_event("r", n))
        before = _raw_count(path)  # the step has not yielded yet
        await asyncio.sleep(0)  # the run waits (a model, a tool): the step is committed
        return before, _raw_count(path)

    before, after = asyncio.run(step())
    assert (before, after) == (0, 3)
    assert [e.event_id for e in store.get_events("r")] == ["0", "1", "2"]
    store.close()


def test_a_read_through_the_store_sees_events_not_committed_yet(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)

    async def step() -> list[str]:
        store.add_event(numbered_event("r", 0))
        return [e.event_id for e in store.get_events("r")]

    assert asyncio.run(step()) == ["0"]
    store.close()


def test_order_is_kept_across_loop_and_plain_calls(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)

    async def in_loop() -> None:
        store.add_event(numbered_event("r", 0))
        # a plain thread (no loop) adds the next event: the pending one is committed first
        await asyncio.to_thread(store.add_event, numbered_event("r", 1))

    asyncio.run(in_loop())
    assert [e.event_id for e in store.get_events("r")] == ["0", "1"]
    store.close()


def test_a_failed_deferred_commit_is_raised_by_the_next_call(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)
    store._db.conn.execute("DROP TABLE event_batches")  # every insert now fails

    async def step() -> None:
        store.add_event(numbered_event("r", 0))
        await asyncio.sleep(0)

    asyncio.run(step())
    try:
        store.update_run("r", "completed", None, None, None)
    except sqlite3.OperationalError as exc:
        assert "event_batches" in str(exc)
    else:
        raise AssertionError("the failed commit of the event was not reported")
    store._db.close()


@pytest.mark.parametrize("api", ["arun", "run"])
def test_kill_9_after_a_step_leaves_the_step_readable(tmp_path: Path, api: str) -> None:
    """A desk run whose tool kills its own process (SIGKILL: no handler, no close): every
    event before the tool call (the model turn, ``tool.started``) is on disk."""
    code = (
        "import os, signal, sys, asyncio\n"
        "from deskwork import Desk, Worker\n"
        "from deskwork.testing import ScriptedAdapter, call_tool\n"
        "from deskwork.tools import tool\n"
        "@tool()\n"
        "def die() -> str:\n"
        '    """Kill the process."""\n'
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return 'unreachable'\n"
        "desk = Desk(model='scripted/m', adapter=ScriptedAdapter([call_tool('die')]),"
        " storage_dir=sys.argv[1])\n"
        "worker = Worker(name='w', tools=[die])\n"
        "if sys.argv[2] == 'run':\n"
        "    desk.run(worker, 'go', run_id='r1')\n"
        "else:\n"
        "    asyncio.run(desk.arun(worker, 'go', run_id='r1'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path), api], timeout=120)
    assert result.returncode == -9
    store = SQLiteRunStore(tmp_path / "deskwork.db")
    types = [e.type for e in store.get_events("r1")]
    assert types[0] == "run.started"
    assert "llm.completed" in types
    assert types[-1] == "tool.started"
    record = store.get_run("r1")
    assert record is not None and record.status == "running"
    store.close()


def test_a_run_start_is_committed_with_its_first_step(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    store = SQLiteRunStore(path)

    async def start() -> tuple[int, int]:
        store.begin_run("r", {"input": "x"}, runner="w")
        store.add_event(numbered_event("r", 0))
        raw = sqlite3.connect(path)
        before = raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        await asyncio.sleep(0)
        after = raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        raw.close()
        return before, after

    assert asyncio.run(start()) == (0, 1)
    record = store.get_run("r")
    assert record is not None and record.runner == "w" and record.input == {"input": "x"}
    store.close()
