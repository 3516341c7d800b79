"""A large input is stored once, not three times; oversize texts get a clear error
(issue 12 item 5)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from deskwork import Desk, Event, Job, Worker
from deskwork.store import RunStore, StoreError
from deskwork.store._blobs import BLOB_MIN_CHARS, MAX_STORED_CHARS
from deskwork.testing import ScriptedAdapter, reply
from deskwork.utils import new_id, utc_now


def test_a_10_mb_input_costs_about_10_mb_on_disk(tmp_path: Path) -> None:
    big = "lorem ipsum " * 850_000  # ~10 MB
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("ok")]), storage_dir=tmp_path)
    report = desk.run(Worker(name="w"), Job(input=big))
    assert report.status == "completed", report.errors
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.input["input"] == big
    assert record.state is not None and record.state.messages[-2].content == big
    desk.close()
    conn = sqlite3.connect(tmp_path / "deskwork.db")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stored = sum(
        conn.execute(f"SELECT COALESCE(SUM(LENGTH({c})), 0) FROM {t}").fetchone()[0]
        for t, c in (("runs", "input"), ("runs", "state"), ("blobs", "data"))
    )
    conn.close()
    assert len(big) <= stored < len(big) * 1.1  # once, plus small references
    assert (tmp_path / "deskwork.db").stat().st_size < len(big) * 1.3


def test_large_and_nul_prefixed_strings_round_trip(run_store: RunStore) -> None:
    big = "é" * (BLOB_MIN_CHARS + 1)
    tricky = {"a": "\x00blob:not-a-reference", "b": "\x00", "c": [big, big], "d": "plain"}
    run_store.create_run("r", tricky)
    event = Event(
        event_id=new_id(),
        type="tool.completed",
        timestamp=utc_now(),
        run_id="r",
        source="s",
        payload={"result": big, "odd": "\x00\x00x"},
    )
    run_store.add_event(event)
    run_store.update_run("r", "completed", "out", {"same": big}, None)
    record = run_store.get_run("r")
    assert record is not None and record.input == tricky and record.output_json == {"same": big}
    assert run_store.get_events("r")[0].payload == event.payload
    assert run_store.list_runs()[0].input == tricky


def test_an_oversize_text_is_refused_with_a_clear_error(run_store: RunStore) -> None:
    huge = "x" * (MAX_STORED_CHARS + 1)
    with pytest.raises(StoreError, match="larger than a run store keeps"):
        run_store.create_run("r", {"input": huge})
    assert run_store.get_run("r") is None
    run_store.create_run("r", None)
    with pytest.raises(StoreError, match="larger than a run store keeps"):
        run_store.add_event(
            Event(
                event_id=new_id(),
                type="tool.completed",
                timestamp=utc_now(),
                run_id="r",
                source="s",
                payload={"result": huge},
            )
        )
    with pytest.raises(StoreError, match="larger than a run store keeps"):
        run_store.update_run("r", "completed", huge, None, None)
