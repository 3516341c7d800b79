"""``deskwork eval``: a module, factory or desk that is broken is a usage error (exit 2), never
a traceback with exit 1, which means "under the threshold"."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from deskwork.cli import main

_MODULE = """
from deskwork import Desk, Worker
from deskwork.evals import EvalCase
from deskwork.testing import ScriptedAdapter, reply

cases = [EvalCase(input="hi", expected="hi")]
worker = Worker(name="clerk")


def make_desk():
    return Desk(model="scripted/m", adapter=ScriptedAdapter(default=lambda m, t: reply("hi")),
                storage_dir=STORAGE)


def broken_cases():
    raise RuntimeError("cases factory broke")


def broken_runner():
    raise RuntimeError("runner factory broke")


def broken_desk():
    raise RuntimeError("desk factory broke")
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"evalerr_{uuid.uuid4().hex[:8]}"
    source = textwrap.dedent(_MODULE).replace("STORAGE", repr(str(tmp_path / "store")))
    (tmp_path / f"{name}.py").write_text(source)
    (tmp_path / f"{name}_bad.py").write_text("raise RuntimeError('module broke on import')\n")
    monkeypatch.chdir(tmp_path)
    return name


@pytest.mark.parametrize(
    ("argv_tail", "message"),
    [
        (["{m}:broken_cases", "--runner", "{m}:worker", "--desk", "{m}:make_desk"],
         "broken_cases() raised RuntimeError: cases factory broke"),
        (["{m}:cases", "--runner", "{m}:broken_runner", "--desk", "{m}:make_desk"],
         "broken_runner() raised RuntimeError: runner factory broke"),
        (["{m}:cases", "--runner", "{m}:worker", "--desk", "{m}:broken_desk"],
         "broken_desk() raised RuntimeError: desk factory broke"),
        (["{m}:cases", "--runner", "{m}:worker", "--desk", "{m}:worker"], "is not a Desk"),
        (["{m}:cases", "--runner", "{m}:worker", "--desk", "{m}:make_desk", "--database-url",
          "sqlite:///elsewhere.db"], "has its own stores"),
        (["{m}:cases", "--runner", "{m}:worker", "--desk", "{m}:make_desk", "--storage-dir",
          "elsewhere"], "has its own stores"),
        (["{m}_bad:cases", "--runner", "{m}:worker", "--desk", "{m}:make_desk"],
         "cannot import '{m}_bad': RuntimeError: module broke on import"),
    ],
)  # fmt: skip
def test_a_broken_input_exits_2_with_the_reason(
    module: str, argv_tail: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", *(part.replace("{m}", module) for part in argv_tail)]
    assert main(argv) == 2
    assert message.replace("{m}", module) in capsys.readouterr().err


def test_a_working_setup_still_passes(module: str) -> None:
    argv = ["eval", f"{module}:cases", "--runner", f"{module}:worker"]
    assert main([*argv, "--desk", f"{module}:make_desk"]) == 0
