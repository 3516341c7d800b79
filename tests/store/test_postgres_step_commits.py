"""PostgreSQL run store: events are committed in batches by a writer thread (the event loop
never waits on a commit), and a step is on disk before the run's next tool call."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
import time
from typing import Any

import psycopg
import pytest
from storekit import numbered_event, stored_event_ids

from deskwork.store import StoreError
from deskwork.store import postgres as pg
from deskwork.store.postgres import PostgresRunStore


def test_a_steps_events_are_committed_off_the_event_loop(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    committed_on: list[threading.Thread] = []
    execute = pg._execute_in_order

    def recording(conn: Any, writes: Any) -> Any:
        committed_on.append(threading.current_thread())
        return execute(conn, writes)

    monkeypatch.setattr(pg, "_execute_in_order", recording)
    store = PostgresRunStore(postgres_url)
    store.create_run("r", None)

    async def step() -> threading.Thread:
        for n in range(3):
            store.add_event(numbered_event("r", n))
        await asyncio.to_thread(store.flush)  # waits for the writer thread's commit
        return threading.current_thread()

    loop_thread = asyncio.run(step())
    assert stored_event_ids(postgres_url, "r") == ["0", "1", "2"]  # another connection sees them
    assert committed_on and loop_thread not in committed_on
    store.close()


def test_a_read_through_the_store_sees_events_not_committed_yet(postgres_url: str) -> None:
    store = PostgresRunStore(postgres_url)

    async def step() -> tuple[list[str], bool]:
        store.begin_run("r", {"q": 1}, runner="w")
        for n in range(5):
            store.add_event(numbered_event("r", n))
        record = store.get_run("r")
        return [e.event_id for e in store.get_events("r")], record is not None

    assert asyncio.run(step()) == (["0", "1", "2", "3", "4"], True)
    store.close()


def test_order_is_kept_across_loop_and_plain_calls(postgres_url: str) -> None:
    store = PostgresRunStore(postgres_url)
    store.create_run("r", None)

    async def in_loop() -> None:
        for n in range(0, 20, 2):
            store.add_event(numbered_event("r", n))
            # a plain thread (no loop) adds the next one: committed after the pending ones
            await asyncio.to_thread(store.add_event, numbered_event("r", n + 1))

    asyncio.run(in_loop())
    assert stored_event_ids(postgres_url, "r") == [str(n) for n in range(20)]
    store.close()


def test_a_failed_commit_is_raised_by_the_next_call_and_its_events_kept(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="deskwork.store")
    store = PostgresRunStore(postgres_url)
    store.create_run("r", None)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("ALTER TABLE deskwork_events RENAME TO deskwork_events_away")

        async def step() -> None:
            store.add_event(numbered_event("r", 0))

        asyncio.run(step())
        with pytest.raises((psycopg.Error, StoreError)):
            store.flush()
        deadline = time.monotonic() + 10  # the writer thread says so, as soon as it tried
        while "events not committed yet" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "events not committed yet" in caplog.text
        admin.execute("ALTER TABLE deskwork_events_away RENAME TO deskwork_events")
    store.flush()  # the event was kept: committed now
    assert [e.event_id for e in store.get_events("r")] == ["0"]
    store.close()


def test_events_added_in_a_loop_are_committed_at_a_plain_exit(postgres_url: str) -> None:
    """A process that ends without closing the store loses none of its events."""
    code = (
        "import asyncio, sys\n"
        "from deskwork import Event\n"
        "from deskwork.store.postgres import PostgresRunStore\n"
        "from deskwork.utils import utc_now\n"
        "s = PostgresRunStore(sys.argv[1])\n"
        "async def main():\n"
        "    s.begin_run('r', None)\n"
        "    for n in range(3):\n"
        "        s.add_event(Event(event_id=str(n), type='custom', timestamp=utc_now(),"
        " run_id='r', source='s', payload={}))\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", code, postgres_url], check=True, timeout=120)
    assert stored_event_ids(postgres_url, "r") == ["0", "1", "2"]


def test_kill_9_in_a_tool_leaves_the_turn_before_it_readable(postgres_url: str) -> None:
    """A desk run on PostgreSQL whose tool kills its own process: every event before the
    tool call (the run start, the model turn, ``tool.started``) is stored."""
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
        " database_url=sys.argv[1])\n"
        "asyncio.run(desk.arun(Worker(name='w', tools=[die]), 'go', run_id='r1'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, postgres_url], timeout=120)
    assert result.returncode == -9
    store = PostgresRunStore(postgres_url)
    types = [e.type for e in store.get_events("r1")]
    assert types[0] == "run.started"
    assert "llm.completed" in types
    assert types[-1] == "tool.started"
    record = store.get_run("r1")
    assert record is not None and record.status == "running" and record.runner == "w"
    store.close()


_RUN_THEN_DIE = """
import asyncio, os, signal, sys
from deskwork import Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

@tool()
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

desk = Desk(model="scripted/m", database_url=sys.argv[1],
            adapter=ScriptedAdapter([call_tool("add", a=2, b=3), reply("5")]))
worker = Worker(name="w", tools=[add])

async def arun_then_die():
    report = await desk.arun(worker, Job(input="add 2 and 3"), run_id="r1")
    print(report.status, *[e.type for e in report.events], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # before the loop gets control again

asyncio.run(arun_then_die())
"""


def test_a_returned_run_is_all_stored_after_kill_9(postgres_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RUN_THEN_DIE, postgres_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    status, *reported = done.stdout.split()
    assert status == "completed"
    store = PostgresRunStore(postgres_url)
    try:
        record = store.get_run("r1")
        assert record is not None and record.status == "completed" and record.output == "5"
        assert [e.type for e in store.get_events("r1")] == reported
        assert reported[-1] == "run.completed"
    finally:
        store.close()
