"""A damaged SQLite store: every way of reading it either works or raises StoreError.

Never another exception type, never a run that silently reads garbage: the file is truncated,
overwritten, its header destroyed, or pages of it scrambled at seeded random offsets.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.store import SQLiteRunStore, StoreError
from deskwork.testing import ScriptedAdapter, call_tools, reply
from deskwork.tools import tool

pytestmark = pytest.mark.reliability

PAGE = 4096


@tool()
def note(text: str) -> str:
    """Write a note."""
    return f"noted: {text}"


def _desk(path: Path, adapter: ScriptedAdapter) -> Desk:
    return Desk(model="scripted", adapter=adapter, run_store=SQLiteRunStore(path),
                storage_dir=path.parent / ".deskwork")  # fmt: skip


@pytest.fixture(scope="module")
def sound_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sound") / "runs.db"
    turns = [call_tools(("note", {"text": "x" * 300})), reply("done")] * 20
    desk = _desk(path, ScriptedAdapter(turns))
    for n in range(20):
        assert desk.run(Worker(name="w", tools=[note]), f"job {n}").status == "completed"
    desk.close()
    desk.run_store.close()  # a store the caller passed in is the caller's to close
    return path


def _truncate(data: bytearray, rng: random.Random) -> bytearray:
    return data[: rng.randrange(PAGE, len(data) - PAGE)]


def _wipe_header(data: bytearray, rng: random.Random) -> bytearray:
    data[:100] = bytes(rng.randrange(256) for _ in range(100))
    return data


def _scramble_pages(data: bytearray, rng: random.Random) -> bytearray:
    for _ in range(3):
        start = rng.randrange(PAGE, len(data) - 512)
        data[start : start + 512] = bytes(rng.randrange(256) for _ in range(512))
    return data


def _not_sqlite(data: bytearray, rng: random.Random) -> bytearray:
    return bytearray(b"this is a text file, not a database\n" * 50)


DAMAGE: list[Callable[[bytearray, random.Random], bytearray]] = [
    _truncate,
    _wipe_header,
    *[_scramble_pages] * 6,
    _not_sqlite,
]


def _read_everything(path: Path) -> int:
    store = SQLiteRunStore(path)
    try:
        runs = store.list_runs(limit=1000)
        for record in runs:
            store.get_run(record.run_id)
            store.get_events(record.run_id)
        return len(runs)
    finally:
        store.close()


def _run_once(path: Path) -> str:
    desk = _desk(path, ScriptedAdapter([reply("after the damage")]))
    try:
        return desk.run(Worker(name="w"), "again").status
    finally:
        desk.close()
        desk.run_store.close()


@pytest.mark.parametrize("case", range(len(DAMAGE)))
def test_a_damaged_store_reads_or_raises_store_error(
    sound_store: Path, tmp_path: Path, case: int
) -> None:
    damaged = tmp_path / "runs.db"
    shutil.copyfile(sound_store, damaged)
    damage = DAMAGE[case]
    rng = random.Random(case)
    damaged.write_bytes(bytes(damage(bytearray(damaged.read_bytes()), rng)))
    try:
        runs = _read_everything(damaged)
    except StoreError as exc:
        assert str(damaged) in str(exc)  # the message names the file to repair
    else:
        assert runs <= 20
    try:
        status = _run_once(damaged)
    except StoreError:
        return
    assert status == "completed"  # the damage missed what this run touches


@pytest.mark.parametrize(
    ("old", "new"),
    [(b'"noted: ', b"#noted: "), (b'"status"', b'"st#tus"'), (b"completed", b"compXeted")],
    ids=["event-json", "state-field", "status-value"],
)
def test_a_value_damaged_in_place_is_a_store_error_naming_the_file(
    sound_store: Path, tmp_path: Path, old: bytes, new: bytes
) -> None:
    """The file passes SQLite's checks, but a stored JSON text or field no longer parses."""
    damaged = tmp_path / "runs.db"
    data = sound_store.read_bytes()
    assert old in data and len(old) == len(new)
    damaged.write_bytes(data.replace(old, new))
    with pytest.raises(StoreError, match="cannot be read") as caught:
        _read_everything(damaged)
    assert caught.value.location == str(damaged)


def test_reading_a_sound_copy_finds_all_runs(sound_store: Path) -> None:
    assert _read_everything(sound_store) == 20
