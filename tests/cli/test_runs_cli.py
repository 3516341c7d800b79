"""``deskwork runs`` filters, JSON, interrupted runs and ``fail``; ``deskwork doctor``;
damaged stores reported without tracebacks (issue 12 items 15-16, issue 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.cli import main
from deskwork.store import SQLiteRunStore, StoreError
from deskwork.testing import ScriptedAdapter, reply


def _db(tmp_path: Path) -> Path:
    return tmp_path / ".deskwork" / "deskwork.db"


def _seed(tmp_path: Path) -> None:
    store = SQLiteRunStore(_db(tmp_path))
    for run_id, runner in (("a", "alpha"), ("b", "beta"), ("c", "alpha")):
        store.create_run(run_id, {"input": run_id}, runner=runner)
        time.sleep(0.002)
    store.update_run("a", "completed", "done a", None, None)
    store.close()


def _runs_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["runs", *args, "--json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def test_storage_dir_is_accepted_after_the_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    storage = str(tmp_path / ".deskwork")
    assert main(["runs", "--storage-dir", storage]) == 0
    after = capsys.readouterr().out
    assert main(["--storage-dir", storage, "runs"]) == 0
    assert capsys.readouterr().out == after and "done a" in after
    assert main(["runs", "show", "a", "--storage-dir", storage]) == 0
    assert "status=completed" in capsys.readouterr().out


def test_filters_and_json_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    monkeypatch.chdir(tmp_path)
    rows = _runs_json(capsys)
    assert [r["run_id"] for r in rows] == ["a", "c", "b"]
    assert rows[0]["status"] == "completed" and rows[0]["runner"] == "alpha"
    assert rows[0]["output"] == "done a" and rows[1]["owner"]["pid"] == os.getpid()  # type: ignore[index]
    assert [r["run_id"] for r in _runs_json(capsys, "--status", "running")] == ["c", "b"]
    assert [r["run_id"] for r in _runs_json(capsys, "--runner", "alpha")] == ["a", "c"]
    assert [r["run_id"] for r in _runs_json(capsys, "--limit", "1")] == ["a"]
    assert _runs_json(capsys, "--since", "2030-01-01T00:00") == []
    assert len(_runs_json(capsys, "--since", "10m")) == 3
    assert main(["runs", "--since", "yesterday"]) == 2
    assert "use a duration" in capsys.readouterr().err
    assert main(["runs", "show", "c", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["run_id"] == "c" and shown["runner"] == "alpha" and shown["events"] == []


def _start_and_die(path: Path) -> None:
    """A process starts a run and dies without ending it (kill -9 in real life)."""
    code = (
        "import os, sys\n"
        "from deskwork.store import SQLiteRunStore\n"
        "SQLiteRunStore(sys.argv[1]).create_run('orphan', None, runner='w')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=300)


def test_a_run_left_running_by_a_dead_process_is_interrupted_and_can_be_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    _start_and_die(_db(tmp_path))
    monkeypatch.chdir(tmp_path)
    rows = {r["run_id"]: r for r in _runs_json(capsys)}
    assert rows["orphan"]["status"] == "interrupted"
    assert rows["orphan"]["stored_status"] == "running"
    assert rows["c"]["status"] == "running"  # this (live) process owns it
    assert [r["run_id"] for r in _runs_json(capsys, "--status", "interrupted")] == ["orphan"]
    assert main(["runs"]) == 0 and "interrupted" in capsys.readouterr().out

    assert main(["runs", "fail", "orphan"]) == 0
    store = SQLiteRunStore(_db(tmp_path))
    record = store.get_run("orphan")
    assert record is not None and record.status == "failed"
    assert [e.type for e in store.get_events("orphan")] == ["run.failed"]
    store.close()
    capsys.readouterr()
    assert main(["runs", "fail", "orphan"]) == 1
    assert "already ended" in capsys.readouterr().err


def test_fail_refuses_a_run_whose_process_is_alive_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "fail", "c"]) == 1
    assert f"is still running in process {os.getpid()}" in capsys.readouterr().err
    assert main(["runs", "fail", "c", "--force"]) == 0
    assert main(["runs", "fail", "missing"]) == 1
    assert "unknown run missing" in capsys.readouterr().err


def test_a_paused_run_can_be_failed_with_its_end_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteRunStore(_db(tmp_path))
    store.create_run("held", None)
    store.update_run("held", "paused", "so far", None, None)
    store.close()
    monkeypatch.chdir(tmp_path)
    assert main(["runs", "fail", "held", "--force"]) == 0
    store = SQLiteRunStore(_db(tmp_path))
    record = store.get_run("held")
    assert record is not None and (record.status, record.output) == ("failed", "so far")
    assert [e.type for e in store.get_events("held")] == ["run.failed"]
    store.close()


def test_doctor_reports_a_sound_store_and_interrupted_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)
    _start_and_die(_db(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "integrity: ok" in out and "schema: runs v5" in out
    assert "1 completed, 1 interrupted, 2 running" in out and "runs fail RUN_ID" in out
    assert main(["runs", "--check"]) == 0
    assert capsys.readouterr().out == out


def _corrupt(path: Path, how: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "garbage":
        path.write_bytes(b"not a database " * 500)
    elif how == "empty":
        path.write_bytes(b"")
        old = time.time() - 60
        os.utime(path, (old, old))
    else:  # half of a real database
        store = SQLiteRunStore(path)
        for n in range(200):
            store.create_run(f"r{n}", {"input": "x" * 500})
        store.close()
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["garbage", "empty", "truncated"])
def test_a_damaged_store_is_reported_clearly_and_left_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    path = _db(tmp_path)
    _corrupt(path, how)
    before = path.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 1
    captured = capsys.readouterr()
    assert "no runs yet" not in captured.out
    assert str(Path(".deskwork") / "deskwork.db") in captured.err and "damaged" in captured.err
    assert "Traceback" not in captured.err
    assert main(["doctor"]) == 1
    assert "problem:" in capsys.readouterr().out
    with pytest.raises(StoreError, match="damaged") as caught:
        SQLiteRunStore(path)
    assert caught.value.location == str(path)
    assert path.read_bytes() == before  # never overwritten, truncated or dropped


def test_desk_run_on_a_damaged_store_raises_store_error_without_a_misleading_chain(
    tmp_path: Path,
) -> None:
    _corrupt(tmp_path / "deskwork.db", "garbage")
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("x")]), storage_dir=tmp_path)
    with pytest.raises(StoreError) as caught:
        desk.run(Worker(name="w"), Job(input="go"))
    text = "".join(traceback.format_exception(caught.value))
    assert str(tmp_path / "deskwork.db") in text
    assert "no running event loop" not in text


def test_missing_store_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--storage-dir", str(tmp_path / "nothing")]) == 1
    assert "no run store at" in capsys.readouterr().err
    assert not (tmp_path / "nothing").exists()


def test_damage_found_after_opening_is_reported_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path)

    def damaged(*_args: object, **_kwargs: object) -> list[object]:
        raise StoreError("the deskwork database X is damaged (database disk image is malformed)")

    monkeypatch.setattr(SQLiteRunStore, "list_runs", damaged)
    assert main(["runs", "--storage-dir", str(tmp_path / ".deskwork")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the deskwork database X is damaged") and "Traceback" not in err
