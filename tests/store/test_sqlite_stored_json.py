"""What the SQLite run store keeps of inputs, outputs, event payloads and state.

The store writes plain JSON (dicts, lists, text, numbers) with a fast encoder and anything
else as ``json.dumps(value, default=str)`` does; either way an event payload reads back as
``json.loads(json.dumps(payload, default=str))`` and an input or output as that of
``to_jsonable(value)``, so speeding up the writes changed nothing a reader sees.
"""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from storekit import paused_state

from deskwork import Event, Message
from deskwork.store import SQLiteRunStore
from deskwork.store._blobs import BLOB_MIN_CHARS
from deskwork.utils import new_id, to_jsonable

PLAIN: list[Any] = [
    {"text": "plain", "n": 3, "ok": True, "none": None, "nested": {"list": [1, "two", 3.5]}},
    {"unicode": "café ✓ 漢字 \u2028", "controls": "tab\there\nnew\x01\x7f"},
    {"big": 2**70, "negative": -(2**64), "tiny": 1e-05, "zero": -0.0, "huge": 1e300},
    {"nul_prefixed": "\x00x", "nul_inside": "a\x00b", "two_nuls": "\x00\x00y"},
    {"literal": "\\u0000 is how JSON writes a NUL"},
    {"long": "é" * (BLOB_MIN_CHARS + 1), "again": "é" * (BLOB_MIN_CHARS + 1)},
    [],
    {},
]
OTHER: list[Any] = [
    {"when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)},  # str(): a space, not a "T"
    {"tuple": (1, "x"), "set": {"only"}},
    {1: "int key", "x": "str key"},
    {"surrogate": "a\ud800b"},
    {"subclass": type("Text", (str,), {})("sub")},
]


def _expected(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


@pytest.fixture
def store(tmp_path: Path) -> SQLiteRunStore:
    return SQLiteRunStore(tmp_path / "deskwork.db")


def _event(run_id: str, payload: dict[str, Any]) -> Event:
    return Event(
        event_id=new_id(),
        type="tool.completed",
        timestamp=datetime.now(UTC),
        run_id=run_id,
        source="s",
        payload=payload,
    )


@pytest.mark.parametrize("value", PLAIN + OTHER)
def test_inputs_outputs_and_payloads_read_back_as_json_dumps_wrote_them(
    store: SQLiteRunStore, value: Any
) -> None:
    store.create_run("r", value)
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        store.add_event(_event("r", value))
        assert store.get_events("r")[0].payload == _expected(value)
    store.update_run("r", "completed", "out", value, None)
    record = store.get_run("r")
    assert record is not None
    assert record.input == record.output_json == _expected(to_jsonable(value))


def test_non_finite_floats_read_back_as_python_wrote_them(store: SQLiteRunStore) -> None:
    value = {"nan": math.nan, "inf": math.inf, "minus": -math.inf}
    store.create_run("r", value)
    store.add_event(_event("r", value))
    record = store.get_run("r")
    assert record is not None
    for read in (record.input, store.get_events("r")[0].payload):
        assert math.isnan(read["nan"]) and read["inf"] == math.inf and read["minus"] == -math.inf


@pytest.mark.parametrize(
    "content",
    ["plain", "a lone surrogate \ud800 here", "\x00nul first", "long " * BLOB_MIN_CHARS],
)
def test_a_stored_state_reads_back_equal(store: SQLiteRunStore, content: str) -> None:
    state = paused_state("r")
    state.messages.append(Message(role="user", content=content))
    store.create_run("r", None)
    store.update_run("r", "paused", None, None, state)
    record = store.get_run("r")
    assert record is not None and record.state == state


def test_a_raw_reader_parses_every_stored_json_column(store: SQLiteRunStore) -> None:
    value = PLAIN[0] | PLAIN[1]
    store.create_run("r", value)
    store.add_event(_event("r", value))
    store.update_run("r", "paused", None, value, paused_state("r"))
    store.close()
    conn = sqlite3.connect(store.path)
    row = conn.execute("SELECT input, output_json, state FROM runs").fetchone()
    (payload,) = conn.execute("SELECT payload FROM events").fetchone()
    conn.close()
    assert json.loads(row[0]) == json.loads(row[1]) == json.loads(payload) == value
    assert json.loads(row[2]) == paused_state("r").model_dump(mode="json")
