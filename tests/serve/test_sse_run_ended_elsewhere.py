"""A run followed live by the server that runs it, ended by another process (a cancel, or
``deskwork runs fail --force``): its event stream ends with that end, positions as stored.

The SQLite store commits a run's events when the server's loop next gets control, and
since f54969c it refuses them there when another process ended the run meanwhile (the
run's next write raises); the desk has given them to the bus already, and the hub
delivers them live (here tool.completed .. worker.completed: five events no store has).
The stream's positions then run ahead of the store's, the other process's ``run.failed``
sits at a position the stream counts as sent, and no later store poll finds it: the
client got keep-alives for ever and never the run's end; the stream now ends when a store
poll finds the run's end behind its position. The events delivered live but refused are
the documented window of docs/stores.md (the second test).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_support import parse_sse, start_server

from deskwork import Desk, Worker
from deskwork.core.event import EventType, new_event
from deskwork.store import SQLiteRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

pytest.importorskip("httptools")


async def _follow(client: httpx.AsyncClient, run_id: str, subscribed: threading.Event) -> str:
    """The run's event stream, read to its end; ``subscribed`` is set once the stream
    follows the run live (its first frame came)."""
    text = ""
    async with client.stream("GET", f"/runs/{run_id}/events") as response:
        async for chunk in response.aiter_text():
            text += chunk
            subscribed.set()
    return text


def _ender(path: Path, run_ids: list[str], known: threading.Event) -> Desk:
    @tool(description="Meanwhile, another process ends this run")
    def ended_elsewhere() -> str:
        assert known.wait(10)
        other = SQLiteRunStore(path)  # another process's store on the same file
        end = new_event(run_ids[0], EventType.RUN_FAILED, "elsewhere", {"errors": ["gone"]})
        other.finish_run(run_ids[0], "failed", None, None, None, end)
        other.close()
        return "ended"

    adapter = ScriptedAdapter([call_tool("ended_elsewhere"), reply("never stored")])
    desk = Desk(model="scripted/test", adapter=adapter, database_url=f"sqlite:///{path}")
    desk.register(Worker(name="ender", tools=[ended_elsewhere]))
    return desk


async def _stream_of_a_run_ended_elsewhere(path: Path) -> tuple[list[dict[str, Any]], str]:
    """The SSE frames of the run, followed from its start, and its id."""
    run_ids: list[str] = []
    known = threading.Event()
    desk = _ender(path, run_ids, known)
    live, thread = start_server(desk)
    try:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
            body = {"runner": "ender", "job": {"input": "go"}}
            run_ids.append((await client.post("/runs", json=body)).json()["run_id"])
            text = await asyncio.wait_for(_follow(client, run_ids[0], known), 10)
    finally:
        live.server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        desk.close()
    return parse_sse(text), run_ids[0]


async def test_the_stream_ends_with_the_end_another_process_stored(tmp_path: Path) -> None:
    """The client gets the stored end event itself, at its stored position, then the end:
    it sees how (and by whom) the run ended, and can read on from the store's position."""
    path = tmp_path / "deskwork.db"
    frames, run_id = await _stream_of_a_run_ended_elsewhere(path)
    stored = SQLiteRunStore(path).get_events(run_id)
    end = frames[-2]
    assert end["data"]["event_id"] == stored[-1].event_id
    assert (end["data"]["type"], end["data"]["source"]) == (EventType.RUN_FAILED, "elsewhere")
    assert int(end["id"]) == end["data"]["position"] == len(stored) - 1
    assert frames[-1]["event"] == "end" and frames[-1]["data"] == {"status": "failed"}


async def test_the_stream_delivers_the_refused_events_live_then_the_stored_end(
    tmp_path: Path,
) -> None:
    """The live-delivery window of docs/stores.md: the stored events up to the other
    process's end, then the ones this process emitted after it (given to the bus before
    the commit that refused them, kept by no store), then the stored status."""
    path = tmp_path / "deskwork.db"
    frames, run_id = await _stream_of_a_run_ended_elsewhere(path)
    stored = SQLiteRunStore(path).get_events(run_id)
    assert [(e.type, e.source) for e in stored[-2:]] == [
        (EventType.TOOL_STARTED, "ended_elsewhere"),
        (EventType.RUN_FAILED, "elsewhere"),
    ]
    events = [frame["data"] for frame in frames[:-2]]  # then the stored end, the status
    kept = stored[:-1]  # everything before the other process's end
    assert [e["event_id"] for e in events[: len(kept)]] == [e.event_id for e in kept]
    assert [int(frame["id"]) for frame in frames[: len(kept)]] == list(range(len(kept)))
    refused = events[len(kept) :]
    types = [e["type"] for e in refused]
    assert (types[0], types[-1]) == (EventType.TOOL_COMPLETED, EventType.WORKER_COMPLETED)
    assert not {e["event_id"] for e in refused} & {e.event_id for e in stored}
    assert frames[-1]["event"] == "end" and frames[-1]["data"] == {"status": "failed"}
