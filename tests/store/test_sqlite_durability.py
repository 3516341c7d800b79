"""SQLite run store: every write is committed when the call returns (issue 12 item 3)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from deskwork import Event
from deskwork.store import SQLiteRunStore
from deskwork.utils import new_id, utc_now


def _event(run_id: str) -> Event:
    return Event(
        event_id=new_id(), type="custom", timestamp=utc_now(), run_id=run_id, source="s", payload={}
    )


def test_a_raw_reader_sees_an_event_right_after_add_event(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)
    store.add_event(_event("r"))
    reader = sqlite3.connect(tmp_path / "d.db")
    assert reader.execute("SELECT COUNT(*) FROM events WHERE run_id='r'").fetchone() == (1,)
    reader.close()
    store.close()


def test_another_connection_can_write_right_after_an_event(tmp_path: Path) -> None:
    """No write transaction stays open after ``add_event`` returns (it would hold the write
    lock while the run waits on a model or a tool)."""
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)
    store.add_event(_event("r"))
    other = sqlite3.connect(tmp_path / "d.db", timeout=0)  # fail at once on a held lock
    other.execute(
        "INSERT INTO event_batches (run_id, events)"
        """ VALUES ('o', '[["x", "t", "2026-01-01T00:00:00+00:00", "s", {}]]')"""
    )
    other.commit()
    other.close()
    store.close()


def test_events_survive_a_crash_right_after_add_event(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from deskwork.store import SQLiteRunStore\n"
        "from deskwork import Event\n"
        "from deskwork.utils import utc_now\n"
        "s = SQLiteRunStore(sys.argv[1])\n"
        "s.create_run('r', None)\n"
        "for n in range(3):\n"
        "    s.add_event(Event(event_id=str(n), type='custom', timestamp=utc_now(),"
        " run_id='r', source='s', payload={}))\n"
        "os._exit(0)\n"
    )
    path = tmp_path / "crash.db"
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60)
    store = SQLiteRunStore(path)
    assert [e.event_id for e in store.get_events("r")] == ["0", "1", "2"]
    store.close()


def test_many_events_stay_fast(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")
    store.create_run("r", None)
    started = time.perf_counter()
    for _ in range(500):
        store.add_event(_event("r"))
    assert time.perf_counter() - started < 2.0
    store.close()
