"""A durable run cancelled while it is between steps stores nothing after its end event.

``desk.cancel`` stores the run's ``run.failed`` at once, while the workflow goes on until its
next step (DBOS stops a cancelled workflow there): the events it emits meanwhile
(``assistant.message``, ``tool.started``) land after ``run.failed``, so a client following
the run's event stream never gets its ``end`` (tests/serve/test_serve_durable.py saw it under
load, 9f781de). The desk's emitter refuses them now: the run stops at its next event.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from cancelkit import hold_at_first
from deskwork import Desk, Worker
from deskwork.adapters import BaseModelAdapter, ModelResponse
from deskwork.core.event import RUN_END_EVENTS
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool
def add_numbers(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class _Scripted(BaseModelAdapter):
    def __init__(self) -> None:
        self.inner = ScriptedAdapter([call_tool("add_numbers", a=1, b=2), reply("three")])

    async def acomplete(self, **kwargs: Any) -> ModelResponse:
        return await self.inner.acomplete(**kwargs)


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    made = Desk(model="m", adapter=_Scripted(), storage_dir=tmp_path, durable=True)
    yield made
    made.close()


def test_a_run_cancelled_between_steps_stores_nothing_after_its_end(desk: Desk) -> None:
    # the model step is recorded: the run waits here once
    recorded, cancelled = hold_at_first(desk, "llm.completed")
    run_id = desk.submit(Worker(name="adder", tools=[add_numbers]), "add")
    assert recorded.wait(60), "the model step never ended"
    desk.cancel(run_id)
    cancelled.set()
    report = desk.result(run_id, timeout=60)  # returns once the workflow has stopped
    assert (report.status, report.errors) == ("failed", ["run cancelled"])
    types = [event.type for event in desk.run_store.get_events(run_id)]
    ends = [n for n, kind in enumerate(types) if kind in RUN_END_EVENTS]
    assert ends and types[ends[0] + 1 :] == [], types
