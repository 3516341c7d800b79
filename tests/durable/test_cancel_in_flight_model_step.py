"""A durable run cancelled while its model step is in flight stores nothing after its end.

``desk.cancel`` stores the run's ``run.failed`` at once; DBOS stops the workflow only at its
next step, so the step in flight finishes and the run goes on emitting (``llm.completed``,
``assistant.message``, ``tool.started``) until then. Those events landed after the end, and a
client following the run's event stream never got its ``end``
(tests/serve/test_serve_durable.py under load). The desk's emitter refuses them now.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from cancelkit import hold_at_first, workflows_done
from deskwork import Desk, Worker
from deskwork.adapters import ModelResponse
from deskwork.core.event import RUN_END_EVENTS
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool
def add_numbers(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class _HeldAdapter(ScriptedAdapter):
    """Its first call waits, in flight, until the test releases it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.in_flight, self.release = threading.Event(), threading.Event()

    async def acomplete(self, **kwargs: Any) -> ModelResponse:
        if not self.in_flight.is_set():
            self.in_flight.set()
            await asyncio.to_thread(self.release.wait, 60)
        answer: ModelResponse = await super().acomplete(**kwargs)
        return answer


@pytest.fixture(params=["tool call", "final reply"])
def held(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Desk, _HeldAdapter]]:
    first = call_tool("add_numbers", a=1, b=2) if request.param == "tool call" else reply("3")
    adapter = _HeldAdapter([first, reply("three")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    yield desk, adapter
    desk.close()


def _cancelled_alone(desk: Desk, run_id: str) -> None:
    """The run ended once, by the cancel, and stored nothing after it."""
    report = desk.result(run_id, timeout=60)
    assert (report.status, report.errors) == ("failed", ["run cancelled"])
    workflows_done()
    types = [event.type for event in desk.run_store.get_events(run_id)]
    ends = [n for n, kind in enumerate(types) if kind in RUN_END_EVENTS]
    assert len(ends) == 1 and ends[0] == len(types) - 1, types
    assert types[-1] == "run.failed"
    record = desk.run_store.get_run(run_id)
    assert record is not None and record.status == "failed"
    assert desk.run_store.get_events(run_id)[-1].payload["errors"] == ["run cancelled"]


def test_a_run_cancelled_mid_model_step_stores_nothing_after_its_end(
    held: tuple[Desk, _HeldAdapter],
) -> None:
    desk, adapter = held
    run_id = desk.submit(Worker(name="adder", tools=[add_numbers]), "add")
    assert adapter.in_flight.wait(60), "the model step never started"
    desk.cancel(run_id)
    adapter.release.set()  # the step in flight ends after the run did
    _cancelled_alone(desk, run_id)


def test_a_run_cancelled_just_after_its_model_step_stores_nothing_after_its_end(
    held: tuple[Desk, _HeldAdapter],
) -> None:
    desk, adapter = held
    adapter.in_flight.set()  # no wait in the model: the run waits after the step instead
    # the step is recorded: the run goes on once cancelled
    recorded, cancelled = hold_at_first(desk, "llm.completed")
    run_id = desk.submit(Worker(name="adder", tools=[add_numbers]), "add")
    assert recorded.wait(60), "the model step never ended"
    desk.cancel(run_id)
    cancelled.set()
    _cancelled_alone(desk, run_id)
