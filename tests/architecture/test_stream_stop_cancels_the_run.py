"""A consumer that stops reading a run's event stream early cancels the run: the blackboard
architecture's ``stream`` and a session's ``astream_run`` left it running in the background,
unobserved, through every remaining model call (five rounds after a ``break`` on the first
event); now it ends failed ("run cancelled") and no more calls are made."""

from __future__ import annotations

import asyncio

from deskwork import Desk, Worker
from deskwork.architecture.blackboard import BlackboardArchitecture
from deskwork.store import InMemoryRunStore, InMemorySessionStore
from deskwork.testing import ScriptedAdapter, reply


def _desk() -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(default=reply("a contribution", latency=0.05))
    desk = Desk(
        model="m",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        session_store=InMemorySessionStore(),  # not .deskwork/ in the working directory
    )
    return desk, adapter


async def _stopped_run(desk: Desk) -> tuple[str, list[str]]:
    (record,) = desk.run_store.list_runs()
    return record.status, [e.type for e in desk.run_store.get_events(record.run_id)]


async def test_breaking_out_of_a_blackboard_stream_cancels_the_run() -> None:
    desk, adapter = _desk()
    arch = BlackboardArchitecture(agents={"a": Worker(name="a")}, max_rounds=5)
    events = arch.stream(desk, "a problem")
    async for event in events:
        if event.type == "llm.started":
            break
    await events.aclose()
    await asyncio.sleep(0.3)  # the rounds it would have gone on with
    status, stored = await _stopped_run(desk)
    assert (status, stored[-1]) == ("failed", "run.failed")
    assert len(adapter.calls) == 1


async def test_breaking_out_of_a_session_stream_cancels_the_turn() -> None:
    desk, adapter = _desk()
    session = desk.session(Worker(name="chat"))
    events = session.astream_run("hello")
    async for event in events:
        if event.type == "llm.started":
            break
    await events.aclose()
    await asyncio.sleep(0.2)
    status, stored = await _stopped_run(desk)
    assert (status, stored[-1]) == ("failed", "run.failed")
    assert len(adapter.calls) <= 1
    assert session.history() == []  # the cancelled turn is not kept


async def test_a_stream_read_to_its_end_returns_every_event_of_the_run() -> None:
    desk, _ = _desk()
    arch = BlackboardArchitecture(agents={"a": Worker(name="a")}, max_rounds=2)
    types = [event.type async for event in arch.stream(desk, "a problem")]
    assert (types[0], types[-1]) == ("run.started", "run.completed")


def test_closing_a_sync_session_stream_cancels_the_turn() -> None:
    desk, adapter = _desk()
    session = desk.session(Worker(name="chat"))
    events = session.stream_run("hello")
    for event in events:
        if event.type == "llm.started":
            break
    events.close()
    (record,) = desk.run_store.list_runs()
    assert record.status == "failed"
    assert len(adapter.calls) <= 1
