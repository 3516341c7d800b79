"""What a scorer returns and what a case carries in ``metadata`` never break an eval's
results: a NumPy scalar scores like the bool or number it holds, and metadata of any kind
leaves the results printable as JSON (``deskwork eval --json``)."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.cli import main
from deskwork.evals import EvalCase, evaluate
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def _desk(tmp_path: Path) -> Desk:
    adapter = ScriptedAdapter(default=lambda messages, tools: reply("42"))
    return Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip


@pytest.mark.parametrize(
    ("value", "score", "passed"),
    [
        (lambda np: np.isclose(42.0, 42.0 + 1e-12), 1.0, True),  # numpy.bool_
        (lambda np: np.bool_(False), 0.0, False),
        (lambda np: np.float32(0.75), 0.75, True),
        (lambda np: np.int64(0), 0.0, False),
    ],
)
def test_a_numpy_scalar_scores_like_the_python_value(
    tmp_path: Path, value: Any, score: float, passed: bool
) -> None:
    np = pytest.importorskip("numpy")

    def close_enough(case: EvalCase, report: Any) -> Any:
        return value(np)

    result = evaluate(Worker(name="w"), [EvalCase(input="6 x 7?", scorers=[close_enough])],
                      desk=_desk(tmp_path))  # fmt: skip
    [case] = result.cases
    assert (case.scores[0].value, case.passed) == (score, passed)
    assert case.scores[0].reason is None


def test_an_array_is_not_taken_for_a_score(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")

    def scores_each(case: EvalCase, report: Any) -> Any:
        return np.array([True, False])

    result = evaluate(Worker(name="w"), [EvalCase(input="6 x 7?", scorers=[scores_each])],
                      desk=_desk(tmp_path))  # fmt: skip
    assert "expected a Score, a bool or a number" in str(result.cases[0].scores[0].reason)


class Ticket:
    """A label object from the user's own tracker."""

    def __str__(self) -> str:
        return "TICKET-7"


def test_metadata_of_any_kind_leaves_the_results_json(tmp_path: Path) -> None:
    case = EvalCase(input="6 x 7?", expected="42", metadata={"ticket": Ticket(), "tags": {"m"}})
    result = evaluate(Worker(name="w"), [case], desk=_desk(tmp_path))
    data = json.loads(result.model_dump_json())
    assert data["cases"][0]["metadata"] == {"ticket": "TICKET-7", "tags": ["m"]}
    assert data["cases"][0]["passed"] is True


_MODULE = """
from deskwork import Desk, Worker
from deskwork.evals import EvalCase
from deskwork.testing import ScriptedAdapter, reply


class Ticket:
    def __str__(self):
        return "TICKET-7"


cases = [EvalCase(input="6 x 7?", expected="42", metadata={"ticket": Ticket()})]
worker = Worker(name="w")


def make_desk():
    return Desk(model="scripted/m", adapter=ScriptedAdapter(default=lambda m, t: reply("42")),
                storage_dir=STORAGE)
"""


def test_eval_json_prints_metadata_of_any_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"evalmeta_{uuid.uuid4().hex[:8]}"
    source = textwrap.dedent(_MODULE).replace("STORAGE", repr(str(tmp_path / "store")))
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    code = main(["eval", f"{name}:cases", "--runner", f"{name}:worker",
                 "--desk", f"{name}:make_desk", "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["cases"][0]["metadata"] == {"ticket": "TICKET-7"}
