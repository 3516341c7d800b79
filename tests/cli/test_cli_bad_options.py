"""What a user may type wrong on the command line is answered in one line, and what they
ask for is done: no traceback for a bad database URL or an out-of-range option, and the demo
stores its runs where ``--database-url`` says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deskwork.cli import main
from deskwork.store import SQLiteRunStore


def _seed(path: Path) -> None:
    store = SQLiteRunStore(path)
    for run_id in ("a", "b"):
        store.create_run(run_id, {"input": run_id}, runner="alpha")
    store.close()


@pytest.mark.parametrize("command", [["runs"], ["runs", "show", "a"], ["doctor"]])
def test_an_unsupported_database_url_is_one_line_and_exit_2(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--database-url", "mysql://u:pw@host/db", *command]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unsupported database URL") and "Traceback" not in err
    assert "pw" not in err


@pytest.mark.parametrize("option", [["--since", "10000000w"], ["--limit", str(10**20)]])
def test_out_of_range_since_and_limit_list_every_run(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(tmp_path / "deskwork.db")
    assert main(["runs", "--storage-dir", str(tmp_path), *option, "--json"]) == 0
    assert {row["run_id"] for row in json.loads(capsys.readouterr().out)} == {"a", "b"}


def test_the_demo_stores_its_runs_at_the_database_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    assert main(["demo", "--yes", "--database-url", url]) == 0
    assert not (tmp_path / ".deskwork").exists()
    capsys.readouterr()
    assert main(["runs", "--database-url", url, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


@pytest.mark.parametrize("every", ["inf", "nan", "-1"])
def test_a_worker_refuses_a_takeover_period_it_cannot_wait(
    every: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["worker", "no_such_module:desk", "--takeover-every", every]) == 2
    assert "--takeover-every must be a number of seconds" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "problem"),
    [(["--queue", ""], "--queue: a queue needs"), (["--queue", "  "], "--queue: a queue needs"),
     (["--drain", "-1"], "--drain must be 0 or more")],
)  # fmt: skip
def test_a_worker_refuses_a_blank_queue_or_a_negative_drain(
    flags: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["worker", "no_such_module:desk", *flags]) == 2  # before the desk loads
    assert problem in capsys.readouterr().err


@pytest.mark.parametrize("command", [["runs"], ["doctor"]])
def test_a_directory_given_as_the_database_is_not_called_damaged(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--database-url", f"sqlite:///{tmp_path}"]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path} is a directory, not a deskwork database file" in err
    assert "damaged" not in err and "move it away" not in err


def test_the_demo_with_a_storage_dir_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("x")
    assert main(["demo", "--yes", "--storage-dir", str(tmp_path / "a-file")]) == 1
    err = capsys.readouterr().err
    assert "error: cannot make the directory of the deskwork database" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_target_function_that_needs_arguments_is_one_line(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "json:loads"]) == 2
    assert "error: json:loads needs arguments" in capsys.readouterr().err
