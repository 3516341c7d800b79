"""Evals: run a set of cases through a desk and score every run.

::

    from deskwork.evals import EvalCase, contains, evaluate, tool_called

    cases = [
        EvalCase(input="What is 6 x 7?", expected="42"),
        EvalCase(input="Restock espresso", scorers=[tool_called("restock")], status="paused"),
    ]
    result = evaluate(worker, cases, desk=desk, scorers=[contains()], concurrency=4)
    print(result.table())            # one row per case, with its run id
    assert result.pass_rate == 1.0

Each case is one stored run (``deskwork runs show RUN_ID`` opens it). Scorers are callables
``(case, report) -> Score | bool | float`` (sync or async); built in: :class:`exact`,
:class:`contains`, :class:`regex`, :class:`json_schema`, :class:`tool_called` and
:class:`llm_judge` (a model grades the output, through any deskwork adapter). From the
command line: ``deskwork eval MODULE:CASES --runner MODULE:ATTR``.
"""

from __future__ import annotations

from deskwork.evals._case import CaseResult, EvalCase, EvalResult, Score, output_of
from deskwork.evals._judge import JudgeVerdict, llm_judge
from deskwork.evals._run import aevaluate, evaluate
from deskwork.evals._scorers import Scorer, contains, exact, json_schema, regex, tool_called

__all__ = [
    "CaseResult",
    "EvalCase",
    "EvalResult",
    "JudgeVerdict",
    "Score",
    "Scorer",
    "aevaluate",
    "contains",
    "evaluate",
    "exact",
    "json_schema",
    "llm_judge",
    "output_of",
    "regex",
    "tool_called",
]
