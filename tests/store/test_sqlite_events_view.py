"""SQLite run store: the ``events`` view gives SQL readers one row per event, in the order
stored, though a transaction's events of a run are one row of ``event_batches``."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deskwork import Event
from deskwork.store import SQLiteRunStore, StoreError
from deskwork.utils import utc_now


def _event(run_id: str, n: int) -> Event:
    return Event(
        event_id=f"{run_id}{n}", type="custom", timestamp=utc_now(), run_id=run_id,
        source=f'src "{n}"', payload={"n": n, "text": "a \\ and \" " if n == 2 else "é"},
    )  # fmt: skip


def test_the_events_view_lists_each_event_once_in_stored_order(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "d.db")

    async def steps() -> None:
        for n in range(3):  # one loop turn: both runs' events, interleaved
            store.add_event(_event("a", n))
            store.add_event(_event("b", n))
        await asyncio.sleep(0)
        store.add_event(_event("a", 3))  # the next turn: a batch of its own

    asyncio.run(steps())
    store.add_event(_event("b", 3))  # outside a loop: committed at once
    expected = {run_id: store.get_events(run_id) for run_id in ("a", "b")}
    store.close()
    conn = sqlite3.connect(tmp_path / "d.db")
    rows = conn.execute(
        "SELECT seq, event_id, run_id, type, timestamp, source, payload FROM events ORDER BY seq"
    ).fetchall()
    one_run = conn.execute("SELECT event_id FROM events WHERE run_id='a' ORDER BY seq")
    assert [row[0] for row in one_run] == ["a0", "a1", "a2", "a3"]
    conn.close()
    assert [row[0] for row in rows] == list(range(1, 9))
    for run_id, events in expected.items():
        mine = [row[1:] for row in rows if row[2] == run_id]
        stored = [(e.event_id, e.run_id, e.type, e.timestamp, e.source, e.payload) for e in events]
        assert stored == [
            (*row[:3], datetime.fromisoformat(row[3]), row[4], json.loads(row[5])) for row in mine
        ]


@pytest.mark.parametrize(
    "stored",
    ['{"not": "a list"}', "[1]", '[["e", "custom", 5, "s", {}]]', '[["e", "custom"]]', "[[nope"],
    ids=["object", "not-an-event", "timestamp-number", "short", "not-json"],
)
def test_a_damaged_batch_is_a_store_error_naming_the_file(tmp_path: Path, stored: str) -> None:
    path = tmp_path / "d.db"
    store = SQLiteRunStore(path)
    store.add_event(_event("r", 0))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE event_batches SET events=?", (stored,))
    with pytest.raises(StoreError, match="an event of run r cannot be read") as caught:
        store.get_events("r")
    assert caught.value.location == str(path)
    assert store.get_events("other") == []  # the store itself still works
    store.close()


def test_timestamps_read_back_exactly_whatever_their_offset(tmp_path: Path) -> None:
    offsets = [timedelta(0), timedelta(hours=5, minutes=30), timedelta(seconds=-1172)]
    stamps = [datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone(offset)) for offset in offsets]
    stamps += [datetime(1900, 1, 1), utc_now().replace(microsecond=0)]  # naive; no fraction
    store = SQLiteRunStore(tmp_path / "d.db")
    for n, stamp in enumerate(stamps):
        store.add_event(_event("r", n).model_copy(update={"timestamp": stamp}))
    read = [e.timestamp for e in store.get_events("r")]
    assert read == stamps
    assert [(t.tzinfo, t.utcoffset()) for t in read] == [(t.tzinfo, t.utcoffset()) for t in stamps]
    store.close()
