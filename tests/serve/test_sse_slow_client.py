"""A client that stops reading while its run goes on: the connection's transport pauses,
the stream stops writing directly and queues, and the client, once it reads again, gets
every event in order, exactly what a replay of the stored run gives."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import httpx
import pytest
from serve_support import Live, parse_sse

from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig
from deskwork.serve._direct import DirectWriter

pytest.importorskip("httptools")

EVENTS = 300
PAD = "x" * 2000
"""300 events of 2 kB: more than the connection's small socket buffers and its transport's
high-water mark take, so the connection must pause while the client does not read."""


class _Burst:
    """Waits for its gate, then emits ``EVENTS`` large events without awaiting between them."""

    name = "burst"
    runner_type = "test"

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        assert await asyncio.to_thread(self.gate.wait, 60), "the test never opened the gate"
        for i in range(EVENTS):
            config.emit("test.chunk", self.name, {"i": i, "pad": PAD})
        state = RunState(run_id=config.run_id, status="completed", runner_type="test",
                         runner_name=self.name, job=job.to_state())  # fmt: skip
        return Report(run_id=config.run_id, status="completed", content="done"), state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Any = None
    ) -> Any:
        raise NotImplementedError


def _refusals(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every answer of a direct writer's ``ready`` from here on; the first question also
    gives the connection's socket a small send buffer (loopback's grow to megabytes)."""
    answers: list[bool] = []
    ready = DirectWriter.ready

    def noted(self: DirectWriter) -> bool:
        if not answers:
            server_side = self._cycle.transport.get_extra_info("socket")
            server_side.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        answers.append(ready(self))
        return answers[-1]

    monkeypatch.setattr(DirectWriter, "ready", noted)
    return answers


def _connect(url: str, run_id: str) -> socket.socket:
    """A stream's connection with a small receive buffer, its request sent."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET /runs/{run_id}/events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    sock.settimeout(30)
    return sock


def _read_to_end(sock: socket.socket, data: bytes) -> bytes:
    """The rest of the chunked response after ``data``: its body, decoded."""
    while not data.endswith(b"\r\n0\r\n\r\n"):
        more = sock.recv(65536)
        assert more, "the server closed the stream before its end"
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    out = []
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return b"".join(out)
        out.append(body[:size])
        body = body[size + 2 :]


async def _until_completed(client: httpx.AsyncClient, run_id: str) -> None:
    deadline = time.monotonic() + 60
    while (await client.get(f"/runs/{run_id}")).json()["status"] != "completed":
        assert time.monotonic() < deadline, "the run did not complete"
        await asyncio.sleep(0.05)


async def test_a_client_that_stops_reading_gets_every_event_in_order_once_it_reads(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusals = _refusals(monkeypatch)
    gate = threading.Event()
    live.desk.register(_Burst(gate))
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        body = {"runner": "burst", "job": {"input": "go"}}
        run_id = (await client.post("/runs", json=body)).json()["run_id"]
        sock = await asyncio.to_thread(_connect, live.url, run_id)
        try:
            first = await asyncio.to_thread(sock.recv, 65536)  # run.started: subscribed
            gate.set()
            await _until_completed(client, run_id)  # the client read nothing meanwhile
            text = (await asyncio.to_thread(_read_to_end, sock, first)).decode()
        finally:
            sock.close()
        replay = parse_sse((await client.get(f"/runs/{run_id}/events")).text)
    frames = parse_sse(text)
    assert frames == replay
    assert [f["id"] for f in frames[:-1]] == [str(i) for i in range(EVENTS + 2)]
    chunks = [f["data"]["payload"]["i"] for f in frames if f["data"].get("type") == "test.chunk"]
    assert chunks == list(range(EVENTS))
    assert frames[-1]["data"] == {"status": "completed"}
    assert True in refusals and False in refusals  # written directly, then paused
