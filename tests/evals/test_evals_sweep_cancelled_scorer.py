"""A scorer that awaits something someone else cancelled (an HTTP request its client
dropped) fails its case with the reason; the eval and its other cases go on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.evals import EvalCase, evaluate
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


async def grades_remotely(case: EvalCase, report: Any) -> bool:
    request = asyncio.get_running_loop().create_future()
    request.cancel()  # the grading service's client gave up on it
    return bool(await request)


def test_a_cancelled_await_in_a_scorer_fails_only_its_case(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(default=lambda messages, tools: reply("42"))
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    cases = [
        EvalCase(input="6 x 7?", scorers=[grades_remotely], name="remote"),
        EvalCase(input="6 x 7?", expected="42", name="local"),
    ]
    result = evaluate(Worker(name="w"), cases, desk=desk, concurrency=2)
    remote, local = result.cases
    assert (remote.passed, local.passed) == (False, True)
    assert remote.scores[0].reason == (
        "scorer raised CancelledError: something it awaited was cancelled"
    )
