"""Callers may choose a run's id (idempotency keys); an id is used once."""

from __future__ import annotations

import asyncio

import pytest

from deskwork import Desk, Job, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def _desk(*turns: object) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns, default=reply("again"))  # type: ignore[arg-type]
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore()), adapter


def test_the_caller_chooses_the_run_id() -> None:
    desk, _ = _desk(reply("done"))
    report = desk.run(Worker(name="w"), Job(input="hi"), run_id="order-42")
    assert report.run_id == "order-42"
    assert all(event.run_id == "order-42" for event in report.events)
    record = desk.run_store.get_run("order-42")
    assert record is not None and record.status == "completed"


def test_a_finished_runs_id_is_rejected_and_the_model_is_not_called() -> None:
    desk, adapter = _desk(reply("done"))
    desk.run(Worker(name="w"), "hi", run_id="order-42")
    with pytest.raises(ConfigurationError, match=r"run 'order-42' already exists.*completed"):
        desk.run(Worker(name="w"), "hi again", run_id="order-42")
    assert len(adapter.calls) == 1
    record = desk.run_store.get_run("order-42")
    assert record is not None and record.output == "done"  # the first run is untouched


def test_a_paused_runs_id_is_rejected_too() -> None:
    @tool(requires_confirmation=True)
    def send() -> str:
        return "sent"

    desk, _ = _desk(call_tool("send"), reply("done"))
    paused = desk.run(Worker(name="w", tools=[send]), "go", run_id="k1")
    assert paused.status == "paused"
    with pytest.raises(ConfigurationError, match=r"paused.*desk\.resume"):
        desk.run(Worker(name="w"), "go", run_id="k1")
    assert desk.resume(paused, True).status == "completed"


async def test_two_concurrent_runs_with_one_id_start_once() -> None:
    desk, adapter = _desk()
    adapter.add(reply("slow"))
    first = asyncio.ensure_future(desk.arun(Worker(name="w"), "hi", run_id="same"))
    await asyncio.sleep(0)
    with pytest.raises(ConfigurationError, match="already"):
        await desk.arun(Worker(name="w"), "hi", run_id="same")
    assert (await first).status == "completed"


@pytest.mark.parametrize("bad", ["", "   "])
def test_an_empty_run_id_is_rejected(bad: str) -> None:
    desk, _ = _desk(reply("done"))
    with pytest.raises(ConfigurationError, match="run_id must be a non-empty string"):
        desk.run(Worker(name="w"), "hi", run_id=bad)


def test_generated_ids_still_differ() -> None:
    desk, _ = _desk(reply("a"), reply("b"))
    assert desk.run(Worker(name="w"), "x").run_id != desk.run(Worker(name="w"), "y").run_id
