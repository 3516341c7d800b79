"""Event streams written straight to uvicorn's transport (``serve._direct``): what uvicorn
must look like for it, and that a client sees the same stream either way."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from serve_support import Live, make_desk, parse_sse, serve_app

from deskwork import Worker
from deskwork.core.event import new_event
from deskwork.event_bus import EventBus
from deskwork.serve import create_app
from deskwork.serve._direct import SERVER_SEND, DirectWriter, direct_writer
from deskwork.serve._hub import EventHub, Outgoing
from deskwork.serve._service import _Cursor
from deskwork.tools import tool

pytest.importorskip("httptools")


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_uvicorns_httptools_cycle_is_recognized_and_written_to(http: str) -> None:
    """Fails when uvicorn's httptools request cycle changes shape: streams would silently
    lose their direct writes (h11 has none: streams await ``send`` there)."""
    found: list[DirectWriter | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        scope[SERVER_SEND] = send  # as create_app's app notes it
        await send({"type": "http.response.start", "status": 200, "headers": []})
        direct = direct_writer(scope)
        found.append(direct)
        for part in (b"one\n", b"two\n"):
            if direct is not None and direct.ready():
                direct.write(part)
            else:
                await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"end\n", "more_body": False})

    server, thread, url = serve_app(app, http)
    try:
        response = httpx.get(url + "/", timeout=10)
        assert response.status_code == 200
        assert response.headers["transfer-encoding"] == "chunked"
        assert response.text == "one\ntwo\nend\n"
        assert (found[0] is not None) == (http == "httptools")
        again = httpx.get(url + "/", timeout=10)  # the connection's state stayed right
        assert again.text == "one\ntwo\nend\n"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_response_with_a_length_is_not_written_directly() -> None:
    found: list[DirectWriter | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-length", b"2")]
        scope[SERVER_SEND] = send
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        found.append(direct_writer(scope))
        await send({"type": "http.response.body", "body": b"ok"})

    server, thread, url = serve_app(app, "httptools")
    try:
        assert httpx.get(url + "/", timeout=10).text == "ok"
        assert found == [None]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize(
    "state",
    [{"disconnected": True}, {"response_complete": True}, {"paused": True}, {"closing": True}],
)
def test_a_gone_complete_paused_or_closing_connection_refuses_direct_writes(
    state: dict[str, bool],
) -> None:
    def cycle(disconnected: bool = False, response_complete: bool = False,
              paused: bool = False, closing: bool = False) -> Any:  # fmt: skip
        transport = SimpleNamespace(is_closing=lambda: closing)
        flow = SimpleNamespace(write_paused=paused)
        return SimpleNamespace(disconnected=disconnected, response_complete=response_complete,
                               flow=flow, transport=transport)  # fmt: skip

    assert DirectWriter(cycle()).ready()
    assert not DirectWriter(cycle(**state)).ready()


class _Seen:
    """A middleware of the user's: it notes every body the app sends."""

    def __init__(self, app: Any, bodies: list[bytes]) -> None:
        self.app = app
        self.bodies = bodies

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def noted(message: Any) -> None:
            if message["type"] == "http.response.body" and "/events" in scope["path"]:
                self.bodies.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, noted)


@pytest.mark.parametrize("how", ["wrapping the app", "added to the app"])
async def test_a_middleware_of_the_users_sees_every_byte_of_a_stream(
    monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    written: list[bytes] = []
    for name in ("write", "write_chunk"):
        monkeypatch.setattr(DirectWriter, name, lambda self, data: written.append(data))
    bodies: list[bytes] = []
    desk = make_desk()
    app: Any = create_app(desk, poll_interval=0.1)
    if how == "added to the app":
        app.add_middleware(_Seen, bodies=bodies)
    else:
        app = _Seen(app, bodies)
    server, thread, url = serve_app(app, "httptools")
    try:
        live = Live(url, desk, server)
        _, texts = await _follow_while_running(live, 1)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert b"".join(bodies).decode() == texts[0]
    assert parse_sse(texts[0])[-1]["data"] == {"status": "completed"}
    assert written == []


async def _follow_while_running(live: Live, clients: int) -> tuple[str, list[str]]:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        body = {"runner": "sleeper", "job": {"input": "0.3"}}
        run_id = (await client.post("/runs", json=body)).json()["run_id"]
        streams = [client.get(f"/runs/{run_id}/events") for _ in range(clients)]
        return run_id, [r.text for r in await asyncio.gather(*streams)]


def _gated_runner(live: Live) -> threading.Event:
    """Register ``gated`` on the live desk: its tool waits until the returned event is set,
    so a test can have its streams connected before the run's later events happen."""
    gate = threading.Event()

    @tool(name="wait_a_bit", description="Wait until the test opens the gate")
    async def wait_for_gate(seconds: float) -> str:
        assert await asyncio.to_thread(gate.wait, 60), "the test never opened the gate"
        return "waited"

    live.desk.register(Worker(name="gated", tools=[wait_for_gate], instructions="Wait."))
    return gate


async def _follow_gated_run(
    live: Live, gate: threading.Event, clients: int
) -> tuple[str, list[str]]:
    """Start a gated run, let ``clients`` streams receive its first replayed event, open the
    gate, and return every stream's whole text: the events after the gate came live."""
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        body = {"runner": "gated", "job": {"input": "1"}}
        run_id = (await client.post("/runs", json=body)).json()["run_id"]
        connected = asyncio.Barrier(clients + 1)

        async def follow() -> str:
            async with client.stream("GET", f"/runs/{run_id}/events") as response:
                parts = response.aiter_text()
                text = await anext(parts)
                await connected.wait()
                return text + "".join([part async for part in parts])

        streams = [asyncio.create_task(follow()) for _ in range(clients)]
        await connected.wait()
        gate.set()
        return run_id, await asyncio.gather(*streams)


def _noted_direct_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The data of every direct write from here on (they still go out)."""
    written: list[bytes] = []
    for name in ("write", "write_chunk"):
        write = getattr(DirectWriter, name)

        def noted(self: DirectWriter, data: bytes, write: Any = write) -> None:
            written.append(data)
            write(self, data)

        monkeypatch.setattr(DirectWriter, name, noted)
    return written


@pytest.mark.parametrize("direct", [True, False])
async def test_followers_see_the_stream_a_late_client_replays(
    live: Live, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    """Live events go straight to the transport (or, when the connection cannot take them,
    through ``send``), and every follower gets exactly what the stored run replays."""
    written = _noted_direct_writes(monkeypatch)
    if not direct:
        monkeypatch.setattr(DirectWriter, "ready", lambda self: False)
    gate = _gated_runner(live)
    run_id, bodies = await _follow_gated_run(live, gate, 3)
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        replay = parse_sse((await client.get(f"/runs/{run_id}/events")).text)
    assert replay[-1]["data"] == {"status": "completed"}
    assert all(parse_sse(body) == replay for body in bodies)
    if direct:  # at least the first event after the gate, by each of the three streams
        assert len(written) >= 3 and all(b"run.completed" not in w for w in written)
    else:
        assert written == []  # a connection that cannot take a write gets none


async def test_streams_write_directly_under_fastapis_own_opentelemetry(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a tracer provider configured for the process (as an app with OpenTelemetry, or
    a test before this one, sets it), FastAPI wraps ``receive`` and ``send`` of every
    request inside the app: streams still write directly, and the request's span ends
    when the stream does."""
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("fastapi.telemetry", reason="this FastAPI has no OpenTelemetry layer")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    written = _noted_direct_writes(monkeypatch)
    _, bodies = await _follow_gated_run(live, _gated_runner(live), 2)
    assert all(parse_sse(body)[-1]["data"] == {"status": "completed"} for body in bodies)
    assert len(written) >= 2
    routes = [(s.attributes or {}).get("http.route") for s in exporter.get_finished_spans()]
    assert routes.count("/runs/{run_id}/events") == 2  # FastAPI's layer was in place
    provider.shutdown()


async def test_a_stream_fed_without_waking_is_still_woken_by_the_tick_once_quiet() -> None:
    """Events taken in the hub's delivery do not wake the stream, so no new wait re-arms
    the hub's tick: the tick re-arms itself, else a stream that goes quiet would never
    send a keep-alive or poll the store again."""
    bus = EventBus()
    hub = EventHub(bus, asyncio.get_running_loop(), 0.02)
    sub = hub.subscribe("r1")
    taken: list[Outgoing] = []

    def take_now(item: Outgoing) -> bool:
        taken.append(item)
        return True

    waiting = asyncio.ensure_future(sub.wait(take_now))
    await asyncio.sleep(0)
    bus.emit(new_event("r1", "bench.tick", "test", {}))
    try:
        assert await asyncio.wait_for(waiting, 5) is False  # woken idle, by a later tick
    finally:
        sub.close()
        hub.close()
    assert [t.event.type for t in taken] == ["bench.tick"]
    assert not sub.ready


async def test_an_event_the_stream_cannot_take_now_and_those_after_it_queue_in_order() -> None:
    bus = EventBus()
    hub = EventHub(bus, asyncio.get_running_loop(), 10)
    sub = hub.subscribe("r1")
    answers = iter([True, False, True])

    def take_now(item: Outgoing) -> bool:
        return next(answers)

    waiting = asyncio.ensure_future(sub.wait(take_now))
    await asyncio.sleep(0)
    for i in range(4):
        bus.emit(new_event("r1", "bench.tick", "test", {"i": i}))
    try:
        assert await asyncio.wait_for(waiting, 5) is True
        assert [o.event.payload["i"] for o in sub.take()] == [1, 2, 3]
    finally:
        sub.close()
        hub.close()


async def test_a_stream_that_fails_to_take_an_event_is_closed_and_the_others_get_it() -> None:
    bus = EventBus()
    hub = EventHub(bus, asyncio.get_running_loop(), 10)
    broken, fine = hub.subscribe("r1"), hub.subscribe("r1")
    taken: list[Outgoing] = []

    def fails(item: Outgoing) -> bool:
        raise RuntimeError("boom")

    def takes(item: Outgoing) -> bool:
        taken.append(item)
        return True

    waits = [asyncio.ensure_future(broken.wait(fails)), asyncio.ensure_future(fine.wait(takes))]
    await asyncio.sleep(0)
    bus.emit(new_event("r1", "bench.tick", "test", {}))  # the emitter is not disturbed
    try:
        assert await asyncio.wait_for(waits[0], 5) is False
        assert broken.closed and hub.subscribers("r1") == 1
        assert [t.event.type for t in taken] == ["bench.tick"] and not waits[1].done()
    finally:
        fine.close()
        hub.close()


def test_an_events_chunk_is_its_frame_at_that_position_in_chunked_encoding() -> None:
    """Streams of a run share the chunk they write; one at another position gets its own."""
    out = Outgoing(new_event("r1", "bench.tick", "test", {"i": 1}))
    for position in (3, 3, 4, 3):
        chunk = out.chunk(position)
        frame = out.frame(position)
        assert frame.startswith(b"id: %d\n" % position)
        assert chunk == b"%x\r\n" % len(frame) + frame + b"\r\n"


def test_a_stream_sends_each_event_once_and_keeps_no_id_of_live_events() -> None:
    """Stored events may come again live (the stream subscribes before it reads the store):
    they are dropped then, and their ids forgotten; live events leave no id behind, so a
    long run does not grow every stream's memory (nor pause the hub's delivery to resize
    it)."""
    events = [new_event("r1", "bench.tick", "test", {"i": i}) for i in range(6)]

    def ids(frames: bytes) -> list[str]:
        return [str(f["id"]) for f in parse_sse(frames.decode())]

    cursor = _Cursor(-1, 10)
    replay = cursor.frames([Outgoing(e) for e in events[:3]], live=False, stored=True)
    assert ids(replay) == ["0", "1", "2"]
    assert ids(cursor.frames([Outgoing(e) for e in events[:4]])) == ["3"]  # 0-2 came again
    assert ids(cursor.frames([Outgoing(events[4])], stored=True)) == ["4"]  # a poll of the store
    assert ids(cursor.frames([Outgoing(e) for e in events[4:]])) == ["5"]
    assert not cursor.seen
