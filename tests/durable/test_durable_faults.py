"""The database goes away in the middle of a durable run (PostgreSQL cut off by a proxy,
SQLite locked by another process): the run waits and continues, or ends in a defined state;
nothing is half-written and a finished tool call never runs twice."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from durablekit import PYTHON, app_env, lines, open_store, wait_for
from faultkit import APP, Proxy, run_faults_app

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

DONE: list[str] = []


@tool
def first() -> str:
    """A side effect that must happen once."""
    DONE.append("first")
    return "first done"


def _worker(fault: Any) -> Worker:
    @tool
    def outage() -> str:
        """The database goes away while this tool runs."""
        DONE.append("outage")
        fault()
        return "outage done"

    return Worker(name="ops", tools=[first, outage])


def _script() -> ScriptedAdapter:
    return ScriptedAdapter([call_tool("first"), call_tool("outage"), reply("all done")])


def _types(desk: Desk, run_id: str) -> list[str]:
    return [e.type for e in desk.run_store.get_events(run_id)]


def _assert_one_clean_run(desk: Desk, run_id: str, status: str) -> None:
    """The stored run reads as one run: each event once, in order, ending as ``status``."""
    events = desk.run_store.get_events(run_id)
    assert len({e.event_id for e in events}) == len(events)
    types = [e.type for e in events]
    assert types.count("run.started") == 1
    assert types[-1] == f"run.{status}"
    assert types.count("run.completed") + types.count("run.failed") == 1
    record = desk.run_store.get_run(run_id)
    assert record is not None and record.status == status


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    proxied = Proxy(("127.0.0.1", 5432))
    yield proxied
    proxied.cut()


def test_postgres_cut_off_mid_run_the_run_waits_and_continues(
    postgres_database: str, proxy: Proxy
) -> None:
    """The connection drops while tool 2 runs and comes back 1.5 s later: the run goes on
    where it was (DBOS retries its checkpoint, the store reconnects)."""
    DONE.clear()

    def blip() -> None:
        proxy.cut()
        threading.Timer(1.5, proxy.restore).start()

    desk = Desk(model="m", adapter=_script(), database_url=proxy.url(postgres_database),
                durable=True)  # fmt: skip
    try:
        report = desk.run(_worker(blip), "go", run_id="pg-1")
        assert (report.status, report.content) == ("completed", "all done"), report.errors
        assert DONE == ["first", "outage"]
        _assert_one_clean_run(desk, "pg-1", "completed")
        assert _types(desk, "pg-1").count("tool.completed") == 2
        assert desk.recover() == []
    finally:
        desk.close()


def _lock_sqlite(path: Path, seconds: float) -> None:
    """Another process's writer holds ``path`` locked for ``seconds`` (from now)."""
    locked = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("BEGIN EXCLUSIVE")
            locked.set()
            time.sleep(seconds)
            conn.execute("ROLLBACK")
        finally:
            conn.close()

    threading.Thread(target=hold, daemon=True).start()
    assert locked.wait(5)


def test_sqlite_locked_shorter_than_its_busy_timeout_the_run_waits_and_continues(
    tmp_path: Path,
) -> None:
    DONE.clear()
    database = tmp_path / "deskwork.db"
    desk = Desk(model="m", adapter=_script(), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(_worker(lambda: _lock_sqlite(database, 1.0)), "go", run_id="sq-1")
        assert (report.status, report.content) == ("completed", "all done"), report.errors
        assert DONE == ["first", "outage"]
        _assert_one_clean_run(desk, "sq-1", "completed")
        assert desk.recover() == []
    finally:
        desk.close()


def test_sqlite_locked_past_its_busy_timeout_the_run_ends_failed_with_the_reason(
    tmp_path: Path,
) -> None:
    """The store waits 5 s (its busy timeout) for the lock, then gives up: the run ends
    ``failed`` with the reason, recorded when the lock is gone; DBOS's workflow ends too, so
    nothing is left to recover and nothing runs again."""
    DONE.clear()
    database = tmp_path / "deskwork.db"
    desk = Desk(model="m", adapter=_script(), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(_worker(lambda: _lock_sqlite(database, 8.0)), "go", run_id="sq-2")
        assert report.status == "failed"
        assert any("database is locked" in error for error in report.errors), report.errors
        record = desk.run_store.get_run("sq-2")
        assert record is not None and record.status == "failed"
        assert _types(desk, "sq-2")[-1] == "run.failed"
        assert desk.recover() == []
        assert DONE == ["first", "outage"]
    finally:
        desk.close()


# -- a step whose output cannot be serialized ------------------------------------------------


class _Handle:
    """A tool's result that does not pickle (it holds a lock)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()

    def __str__(self) -> str:
        return f"handle {self.name}"


@tool
def open_handle(name: str) -> Any:
    """Returns an object that cannot be checkpointed as it is."""
    DONE.append(name)
    return _Handle(name)


def test_a_tool_result_that_does_not_pickle_is_checkpointed_as_its_text(tmp_path: Path) -> None:
    from dbos import DBOS

    DONE.clear()
    adapter = ScriptedAdapter([call_tool("open_handle", name="h1"), reply("opened")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w", tools=[open_handle]), "open", run_id="u-1")
        steps = DBOS.list_workflow_steps("u-1")
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "opened"), report.errors
    assert DONE == ["h1"]
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "handle h1"
    recorded = next(s["output"] for s in steps if s["function_name"].startswith("deskwork.tool"))
    assert recorded is not None and recorded.content == "handle h1"
    assert isinstance(recorded.data, str)  # the object, kept as text: it replays


def test_postgres_gone_and_the_process_killed_another_process_finishes_the_run(
    tmp_path: Path, postgres_database: str, proxy: Proxy
) -> None:
    """The database goes away while tool 2 runs, and the process dies before it is back;
    a process that reaches the database recovers the run: tool 1 does not run again."""
    env = app_env(tmp_path, DESKWORK_DATABASE_URL=proxy.url(postgres_database))
    proc = subprocess.Popen([PYTHON, str(APP), "run", "pg-2"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(lambda: lines(tmp_path / "step_two") != [], timeout=60, what="tool call 2")
        proxy.cut()
        time.sleep(1.0)
        assert proc.poll() is None  # still waiting for its database
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    backend = {"DESKWORK_DATABASE_URL": postgres_database}
    reports = run_faults_app(tmp_path, "recover", **backend)

    assert reports == [{"run_id": "pg-2", "status": "completed", "content": "all done"}]
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "step_two")) == 2
    store = open_store(tmp_path, backend)
    try:
        events = store.get_events("pg-2")
    finally:
        store.close()
    types = [e.type for e in events]
    assert len({e.event_id for e in events}) == len(events)
    assert types.count("run.started") == 1 and types.count("run.recovered") == 1
    assert types.count("tool.completed") == 2 and types[-1] == "run.completed"
