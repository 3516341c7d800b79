"""Review: a live event reaches a stream's client only once the run store committed it.

A client resumes with ``Last-Event-ID: <position>`` (positions in the stored event log), so a
frame it got must name an event the store keeps at that position. With the SQLite store, an
event emitted on the server's loop is committed when the loop next gets control; a frame
written to the client before that (a direct write, in the event's delivery) names an event a
crash of the server would lose: the client's position then points past events it never saw.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import httpx
import pytest
from serve_support import make_desk, parse_sse, start_server

from deskwork.serve._direct import DirectWriter

pytest.importorskip("httptools")


async def test_a_live_frame_names_only_events_the_store_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deskwork.db"
    desk = make_desk(f"sqlite:///{path}")
    uncommitted: list[str] = []
    write = DirectWriter.write

    def checked(self: DirectWriter, data: bytes) -> None:
        with sqlite3.connect(path) as conn:  # another reader: sees committed rows only
            stored = {row[0] for row in conn.execute("SELECT event_id FROM events")}
        for frame in parse_sse(data.decode()):
            data_ = frame.get("data")
            if isinstance(data_, dict) and data_.get("event_id", "") not in stored | {""}:
                uncommitted.append(data_["type"])
        write(self, data)

    monkeypatch.setattr(DirectWriter, "write", checked)
    live, thread = start_server(desk)
    try:
        async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
            body = {"runner": "sleeper", "job": {"input": "0.3"}}
            run_id = (await client.post("/runs", json=body)).json()["run_id"]
            text = (await client.get(f"/runs/{run_id}/events")).text
    finally:
        live.server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        desk.close()
    assert parse_sse(text)[-1]["data"] == {"status": "completed"}
    assert uncommitted == [], f"sent before the store committed them: {uncommitted}"
