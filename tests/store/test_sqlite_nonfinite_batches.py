"""SQLite run store, schema v5: an event whose payload holds a non-finite float (NaN,
Infinity, which Python's JSON writes and reads back) stays readable through the store after
the v4 -> v5 migration, and the ``events`` view still gives SQL readers every row: SQLite's
JSON functions refuse ``NaN`` and ``Infinity``, so such a payload must not sit in a batch
as JSON of its own."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from deskwork import Event
from deskwork.store import SQLiteRunStore
from deskwork.store._blobs import pack_json
from deskwork.store._sqlite import SQLiteDatabase
from deskwork.store.sqlite import _MIGRATIONS

NON_FINITE = {"nan": math.nan, "inf": math.inf, "minus": -math.inf, "n": 1}


def _event(run_id: str, payload: dict[str, object]) -> Event:
    return Event(
        event_id=f"{run_id}-{len(payload)}", type="custom", timestamp=datetime.now(UTC),
        run_id=run_id, source="s", payload=payload,
    )  # fmt: skip


def _non_finite_as_written(payload: dict[str, object]) -> None:
    assert math.isnan(payload["nan"])  # type: ignore[arg-type]
    assert (payload["inf"], payload["minus"], payload["n"]) == (math.inf, -math.inf, 1)


def test_a_v4_event_with_non_finite_floats_reads_back_after_the_migration(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deskwork.db"
    db = SQLiteDatabase(path)
    db.migrate("runs", _MIGRATIONS[:4])  # a store of the previous release, one row per event
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO events (event_id, run_id, type, timestamp, source, payload)"
            " VALUES ('e1', 'r', 'custom', ?, 's', ?)",
            (datetime.now(UTC).isoformat(), pack_json(NON_FINITE, {})),
        )
    db.close()
    store = SQLiteRunStore(path)
    try:
        (event,) = store.get_events("r")
        _non_finite_as_written(event.payload)
    finally:
        store.close()


def test_the_events_view_lists_a_batch_with_non_finite_floats(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    store = SQLiteRunStore(path)
    store.add_event(_event("r", NON_FINITE))
    store.add_event(_event("r", {"n": 2}))
    _non_finite_as_written(store.get_events("r")[0].payload)
    store.close()
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT seq, event_id, payload FROM events ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert [row[:2] for row in rows] == [(1, "r-4"), (2, "r-1")]
    assert "NaN" in rows[0][2] and rows[1][2] == '{"n":2}'
