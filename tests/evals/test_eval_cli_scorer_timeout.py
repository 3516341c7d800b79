"""``deskwork eval --scorer-timeout``: a scorer that hangs fails its case after that many
seconds (the CLI run ends, exit 1 under the threshold); a bad value is a usage error."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from deskwork.cli import main

_MODULE = """
import threading

from deskwork import Desk, Worker
from deskwork.evals import EvalCase
from deskwork.testing import ScriptedAdapter, reply

RELEASE = threading.Event()


def hangs(case, report):
    return RELEASE.wait(30)


cases = [EvalCase(input="hi", scorers=[hangs]), EvalCase(input="hi", expected="hi")]
worker = Worker(name="clerk")


def make_desk():
    return Desk(model="scripted/m", adapter=ScriptedAdapter(default=lambda m, t: reply("hi")),
                storage_dir=STORAGE)
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"evaltimeout_{uuid.uuid4().hex[:8]}"
    source = textwrap.dedent(_MODULE).replace("STORAGE", repr(str(tmp_path / "store")))
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_hanging_scorer_fails_its_case_after_the_cli_timeout(
    module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    argv = ["eval", f"{module}:cases", "--runner", f"{module}:worker",
            "--desk", f"{module}:make_desk", "--scorer-timeout", "0.2"]  # fmt: skip
    try:
        assert main(argv) == 1
    finally:
        importlib.import_module(module).RELEASE.set()
    out = capsys.readouterr().out
    assert "1/2 passed" in out and "scorer timed out after 0.2s" in out


@pytest.mark.parametrize("bad", ["-1", "nan", "inf"])
def test_a_bad_scorer_timeout_exits_2(
    module: str, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", f"{module}:cases", "--runner", f"{module}:worker",
            "--desk", f"{module}:make_desk", "--scorer-timeout", bad]  # fmt: skip
    assert main(argv) == 2
    assert "--scorer-timeout must be a number of seconds >= 0" in capsys.readouterr().err
