"""A ``MODULE:ATTR`` whose module raises while it is imported is one ``error:`` line and exit
status 2 for every command that takes one, as ``deskwork eval`` already answered it;
``deskwork serve`` and ``deskwork worker`` printed the module's traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskwork.cli import main


@pytest.fixture
def broken_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = "broken_app_for_cli"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('the app broke on import')\n")
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_module_that_raises_on_import_is_a_usage_error(
    command: str, broken_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, f"{broken_module}:desk"]) == 2

    err = capsys.readouterr().err
    assert f"cannot import '{broken_module}': RuntimeError: the app broke on import" in err
    assert f"{broken_module}.py, line 1)" in err  # where to fix it: the traceback is not shown
    assert "Traceback" not in err


@pytest.mark.parametrize("before", [None, "reports"])
def test_a_worker_that_stops_leaves_the_process_serving_the_queues_it_served(
    before: str | None, broken_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deskwork worker`` serves one queue through DESKWORK_QUEUES; run in a process that
    goes on (a test, an application), it left the variable set, and every durable desk the
    process made afterwards served only that queue: its runs on any other queue never ran."""
    import os

    if before is None:
        monkeypatch.delenv("DESKWORK_QUEUES", raising=False)
    else:
        monkeypatch.setenv("DESKWORK_QUEUES", before)

    assert main(["worker", f"{broken_module}:desk", "--queue", "jobs"]) == 2

    assert os.environ.get("DESKWORK_QUEUES") == before


@pytest.fixture
def raising_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = "raising_factory_app_for_cli"
    (tmp_path / f"{name}.py").write_text("def make():\n    raise RuntimeError('boom in factory')\n")
    monkeypatch.chdir(tmp_path)
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_desk_factory_that_raises_is_a_usage_error(
    command: str, raising_factory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the import had the one-line answer: a factory (``app:make``) that raised when
    the command called it ended in its traceback, exit status 1."""
    assert main([command, f"{raising_factory}:make"]) == 2

    err = capsys.readouterr().err
    assert f"{raising_factory}:make raised: RuntimeError: boom in factory" in err
    assert f"{raising_factory}.py, line 2)" in err
    assert "Traceback" not in err
