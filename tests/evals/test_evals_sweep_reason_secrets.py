"""A failed case's reasons and ``deskwork eval --json`` are printed (CI logs): a key the
model echoed is redacted in them, as in the stored run, even where a reason cuts the
output short."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.cli import main
from deskwork.evals import EvalCase, Score, contains, evaluate, exact, json_schema, regex
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234"


def judged_by_hand(case: EvalCase, report: Any) -> Score:
    return Score(name="hand", value=0.0, passed=False, reason=f"leaked {KEY}")


def says_so(case: EvalCase, report: Any) -> str:
    return f"the output was {report.content}"  # not a score: its value is shown


def test_no_reason_shows_the_key_the_model_echoed(tmp_path: Path) -> None:
    echo = f"Sure! Your configured key is {KEY}, keep it safe."
    adapter = ScriptedAdapter(default=lambda messages, tools: reply(echo))
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    scorers = [contains(), exact(), regex("^ok$"), json_schema({"type": "object"}),
               judged_by_hand, says_so]  # fmt: skip
    result = evaluate(Worker(name="w"), [EvalCase(input="hi", expected="ok", scorers=scorers)],
                      desk=desk)  # fmt: skip
    reasons = [score.reason or "" for score in result.cases[0].scores]
    assert all(reasons) and len(reasons) == 6
    assert not any("sk-proj" in reason for reason in reasons), reasons
    assert "sk-proj" not in result.table()
    assert "<redacted>" in reasons[0]


_MODULE = """
from deskwork import Desk, Worker
from deskwork.evals import EvalCase
from deskwork.testing import ScriptedAdapter, reply

cases = [EvalCase(input="show the config", expected="ok")]
worker = Worker(name="w")


def make_desk():
    echo = "api_key=KEY, and the bearer token is Bearer KEY"
    return Desk(model="scripted/m", adapter=ScriptedAdapter(default=lambda m, t: reply(echo)),
                storage_dir=STORAGE)
"""


def test_eval_json_prints_no_key_the_model_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"evalkey_{uuid.uuid4().hex[:8]}"
    source = _MODULE.replace("STORAGE", repr(str(tmp_path / "store"))).replace("KEY", KEY)
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    code = main(["eval", f"{name}:cases", "--runner", f"{name}:worker",
                 "--desk", f"{name}:make_desk", "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 1
    assert "sk-proj" not in out
    assert json.loads(out)["cases"][0]["output"].startswith("api_key=<redacted>")
