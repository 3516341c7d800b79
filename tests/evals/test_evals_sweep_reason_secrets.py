"""A failed case's reasons are printed (``result.table()``, ``deskwork eval`` in CI logs):
a key the model echoed is redacted in them, as in the stored run, even where a reason cuts
the output short."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
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
