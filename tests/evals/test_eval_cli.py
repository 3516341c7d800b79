"""``deskwork eval MODULE:CASES --runner MODULE:ATTR``: a table, stored runs, exit status."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path

import pytest

from deskwork.cli import main
from deskwork.store.sqlite import SQLiteRunStore

_MODULE = """
from deskwork import Desk, Worker
from deskwork.evals import EvalCase, contains
from deskwork.testing import ScriptedAdapter, reply


def _shout(messages, tools):
    question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    return reply(str(question).upper())


cases = [
    EvalCase(input="ship order 7", expected="SHIP ORDER 7", name="ships"),
    EvalCase(input="refund", expected="REFUND", name="refunds"),
    EvalCase(input="cancel", scorers=[contains("cancelled")], name="cancels"),
]
all_good = cases[:2]
worker = Worker(name="clerk")


def make_desk():
    return Desk(model="scripted/m", adapter=ScriptedAdapter(default=_shout),
                storage_dir=STORAGE)
"""


@pytest.fixture
def evals_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"evalmod_{uuid.uuid4().hex[:8]}"
    storage = tmp_path / "store"
    source = textwrap.dedent(_MODULE).replace("STORAGE", repr(str(storage)))
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)  # `deskwork eval` imports from the current directory
    return name


def test_eval_prints_a_table_and_fails_under_the_threshold(
    evals_module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = evals_module
    code = main(["eval", f"{m}:cases", "--runner", f"{m}:worker", "--desk", f"{m}:make_desk"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "2/3 passed (67%)" in out
    assert "✗ cancels: contains: 'cancelled' not in 'CANCEL'" in out
    assert "pass rate 67% is under the threshold 100%" in err
    # every case is a stored run that `deskwork runs show` can open
    store = SQLiteRunStore(tmp_path / "store" / "deskwork.db")
    try:
        run_ids = {r.run_id for r in store.list_runs()}
    finally:
        store.close()
    assert len(run_ids) == 3 and all(run_id in out for run_id in run_ids)

    args = ["eval", f"{m}:cases", "--runner", f"{m}:worker", "--desk", f"{m}:make_desk"]
    assert main([*args, "--threshold", "0.6"]) == 0
    assert main(["eval", f"{m}:all_good", "--runner", f"{m}:worker", "--desk",
                 f"{m}:make_desk"]) == 0  # fmt: skip


def test_eval_json_output(evals_module: str, capsys: pytest.CaptureFixture[str]) -> None:
    m = evals_module
    code = main(["eval", f"{m}:all_good", "--runner", f"{m}:worker", "--desk",
                 f"{m}:make_desk", "--json", "--concurrency", "2"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["summary"]["total"] == 2 and data["summary"]["pass_rate"] == 1.0
    assert [c["name"] for c in data["cases"]] == ["ships", "refunds"]
    assert all(c["run_id"] for c in data["cases"])


@pytest.mark.parametrize(
    ("argv_tail", "message"),
    [
        (["nocolon", "--runner", "{m}:worker", "--desk", "{m}:make_desk"], "expected MODULE:ATTR"),
        (["no_such_mod_x:cases", "--runner", "{m}:worker", "--desk", "{m}:make_desk"],
         "cannot import 'no_such_mod_x'"),
        (["{m}:nope", "--runner", "{m}:worker", "--desk", "{m}:make_desk"], "has no attribute"),
        (["{m}:worker", "--runner", "{m}:worker", "--desk", "{m}:make_desk"],
         "non-empty list of EvalCase"),
        (["{m}:cases", "--runner", "{m}:cases", "--desk", "{m}:make_desk"], "not a runner"),
        (["{m}:cases", "--runner", "{m}:worker"], "give --desk MODULE:ATTR or --model"),
        (["{m}:cases", "--runner", "{m}:worker", "--model", "x/y", "--threshold", "2"],
         "--threshold must be in [0, 1]"),
    ],
)  # fmt: skip
def test_eval_usage_errors_exit_2(
    evals_module: str, argv_tail: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", *(part.replace("{m}", evals_module) for part in argv_tail)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
