"""SQLite run store and ``kill -9`` at the end of a run (issue 13): once ``desk.run`` or
``desk.arun`` has returned, the run's record and every one of its events, the end event
included, are on disk, even if the process is killed at once (no exit handler, no close)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from deskwork import Event
from deskwork.store import SQLiteRunStore
from deskwork.utils import new_id, utc_now

_SCRIPT = """
import asyncio, os, signal, sys
from deskwork import Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

@tool()
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

desk = Desk(model="scripted/m", storage_dir=sys.argv[1],
            adapter=ScriptedAdapter([call_tool("add", a=2, b=3), reply("5")]))
worker = Worker(name="w", tools=[add])
job = Job(input="add 2 and 3")

async def arun_then_die():
    report = await desk.arun(worker, job, run_id="r1")
    print(report.status, *[e.type for e in report.events], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # before the loop gets control again

if sys.argv[2] == "sync":
    report = desk.run(worker, job, run_id="r1")
    print(report.status, *[e.type for e in report.events], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
else:
    asyncio.run(arun_then_die())
"""


@pytest.mark.parametrize("api", ["sync", "async"])
def test_a_returned_run_is_all_on_disk_after_kill_9(tmp_path: Path, api: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path), api],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    status, *reported = done.stdout.split()
    assert status == "completed"
    store = SQLiteRunStore(tmp_path / "deskwork.db")
    try:
        record = store.get_run("r1")
        assert record is not None and record.status == "completed"
        assert record.output == "5"
        assert [e.type for e in store.get_events("r1")] == reported
        assert reported[-1] == "run.completed"
    finally:
        store.close()


@pytest.mark.parametrize("end", ["run.completed", "run.failed", "run.paused"])
def test_an_end_event_is_committed_before_add_event_returns(tmp_path: Path, end: str) -> None:
    """Unlike a step's other events, which wait for the loop to get control."""
    path = tmp_path / "d.db"
    store = SQLiteRunStore(path)
    store.create_run("r", None)

    def raw_types() -> list[str]:
        reader = sqlite3.connect(path)
        try:
            return [row[0] for row in reader.execute("SELECT type FROM events ORDER BY seq")]
        finally:
            reader.close()

    async def finish() -> tuple[list[str], list[str]]:
        for kind in ("llm.completed", end):
            event = Event(event_id=new_id(), type=kind, timestamp=utc_now(), run_id="r", source="w")
            store.add_event(event)
            if kind != end:
                before = raw_types()
        return before, raw_types()

    assert asyncio.run(finish()) == ([], ["llm.completed", end])
    store.close()
