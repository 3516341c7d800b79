"""Schema v4 drops AUTOINCREMENT from ``events.seq``; v5 keeps a transaction's events of a
run in one row (``event_batches``) behind an ``events`` view of one row per event. A store
made by an older deskwork is migrated when opened, and its events keep their order, numbers
and values. A text column whose bytes are not UTF-8 (damage SQLite itself does not notice)
is a StoreError naming the file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from deskwork import Event
from deskwork.store import SQLiteRunStore, StoreError
from deskwork.store._blobs import BLOB_MIN_CHARS, pack_json
from deskwork.store._sqlite import SQLiteDatabase
from deskwork.store.sqlite import _MIGRATIONS, SCHEMA_VERSION
from deskwork.utils import new_id


def _event(run_id: str, n: int) -> Event:
    return Event(
        event_id=new_id(),
        type="step.started",
        timestamp=datetime.now(UTC),
        run_id=run_id,
        source="w",
        payload={"n": n},
    )


def _old_store(path: Path) -> None:
    """A v3 store (events.seq AUTOINCREMENT) with two runs' interleaved events."""
    db = SQLiteDatabase(path)
    db.migrate("runs", _MIGRATIONS[:3])
    with db.transaction() as conn:
        for n in range(6):
            run_id = "a" if n % 2 == 0 else "b"
            conn.execute(
                "INSERT INTO events (event_id, run_id, type, timestamp, source, payload)"
                " VALUES (?, ?, 'step.started', ?, 'w', ?)",
                (new_id(), run_id, datetime.now(UTC).isoformat(), f'{{"n": {n}}}'),
            )
    db.close()


def _schema(path: Path) -> tuple[str, list[int]]:
    conn = sqlite3.connect(path)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name='events'").fetchone()[0]
    seqs = [row[0] for row in conn.execute("SELECT seq FROM events ORDER BY seq")]
    conn.close()
    return str(sql), seqs


def test_an_old_store_is_migrated_and_keeps_its_events(tmp_path: Path) -> None:
    path = tmp_path / "deskwork.db"
    _old_store(path)
    assert "AUTOINCREMENT" in _schema(path)[0]
    store = SQLiteRunStore(path)
    assert [e.payload["n"] for e in store.get_events("a")] == [0, 2, 4]
    store.add_event(_event("a", 6))
    assert [e.payload["n"] for e in store.get_events("a")] == [0, 2, 4, 6]
    assert [e.payload["n"] for e in store.get_events("b")] == [1, 3, 5]
    store.close()
    sql, seqs = _schema(path)
    assert "AUTOINCREMENT" not in sql and seqs == [1, 2, 3, 4, 5, 6, 7]
    conn = sqlite3.connect(path)
    version = conn.execute("SELECT version FROM deskwork_schema WHERE component='runs'")
    assert version.fetchone()[0] == SCHEMA_VERSION == 5
    conn.close()


def test_a_new_store_numbers_events_in_order(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "deskwork.db")
    for n in range(3):
        store.add_event(_event("r", n))
    store.close()
    reopened = SQLiteRunStore(tmp_path / "deskwork.db")  # migrations are not run again
    reopened.add_event(_event("r", 3))
    assert [e.payload["n"] for e in reopened.get_events("r")] == [0, 1, 2, 3]
    reopened.close()
    sql, seqs = _schema(tmp_path / "deskwork.db")
    assert "AUTOINCREMENT" not in sql and seqs == [1, 2, 3, 4]


def _v4_store(path: Path, payloads: list[str]) -> None:
    """A v4 store (one row per event) holding ``payloads`` as stored JSON texts of run r."""
    db = SQLiteDatabase(path)
    db.migrate("runs", _MIGRATIONS[:4])
    with db.transaction() as conn:
        for n, payload in enumerate(payloads):
            conn.execute(
                "INSERT INTO events (event_id, run_id, type, timestamp, source, payload)"
                " VALUES (?, 'r', 'custom', ?, ?, ?)",
                (f"e{n}", datetime.now(UTC).isoformat(), f"s\x00{n}", payload),
            )
    db.close()


def test_v4_events_read_back_equal_after_the_v5_migration(tmp_path: Path) -> None:
    values = [{"n": 1}, {"t": "\x00escaped", "u": ["\u00e9", 1.5, None, True]}, {}]
    values.append({"big": "x" * BLOB_MIN_CHARS})  # stored once, in the blob table
    blobs: dict[str, str] = {}
    texts = [str(pack_json(value, blobs)) for value in values]
    path = tmp_path / "deskwork.db"
    _v4_store(path, texts)
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO blobs (hash, data) VALUES (?, ?)", list(blobs.items()))
    store = SQLiteRunStore(path)
    events = store.get_events("r")
    assert [e.payload for e in events] == values
    assert [(e.event_id, e.source) for e in events] == [(f"e{n}", f"s\x00{n}") for n in range(4)]
    store.add_event(_event("r", 4))
    assert [e.payload for e in store.get_events("r")] == [*values, {"n": 4}]
    store.close()
    assert _schema(path)[1] == [1, 2, 3, 4, 5]


def test_a_damaged_v4_payload_migrates_and_reads_as_damaged(tmp_path: Path) -> None:
    path = tmp_path / "deskwork.db"
    _v4_store(path, ['{"n": 1}', "#not json"])
    store = SQLiteRunStore(path)
    with pytest.raises(StoreError, match="an event of run r cannot be read"):
        store.get_events("r")
    assert store.get_events("other") == []  # the store itself works
    store.close()


def test_a_text_that_is_not_utf8_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "deskwork.db"
    SQLiteRunStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO runs (run_id, status, created_at, updated_at, runner)"
        " VALUES ('r', 'completed', 't', 't', CAST(X'FF' AS TEXT))"
    )
    conn.commit()
    conn.close()
    store = SQLiteRunStore(path)
    with pytest.raises(StoreError, match="UTF-8") as caught:
        store.list_runs()
    assert caught.value.location == str(path)
    store.close()
