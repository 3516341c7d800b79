"""``deskwork serve`` benchmark: event fan-out over Server-Sent Events and HTTP overhead.

The server (uvicorn on 127.0.0.1, in a thread) runs in this process; the SSE clients run in
``CLIENT_PROCESSES`` other processes (up to ``PER_PROCESS`` streams each), so they do not
compete with the server for its GIL. Each stream is read by :class:`SSEReader`, an asyncio
protocol that decodes the chunked body and parses every line and every event's JSON, as a
browser's ``EventSource`` and a viewer's ``onmessage`` do, with little Python per event;
``--httpx-clients`` reads them with httpx instead, as before, at about four times the
clients' CPU per event (the tables show it), which on a machine of few cores they take
from the server (at 50 clients, more than a core at 200 events/s). Scenarios:

- events/s delivered to 1 and to 50 SSE clients following one run that emits ``EVENTS``
  events as fast as it can (each client reads every event);
- emit → client latency (p50/p99) at ``1 / PACE`` events/s: each event carries
  ``perf_counter()`` (CLOCK_MONOTONIC, the same clock in every process) from ``config.emit``;
  the client subtracts it from the time it parsed the event. The cost fan-out *adds* is the
  50-client figure minus the 1-client figure. Each scenario runs ``REPEATS`` times; the
  tables show medians.
- ``POST /runs?wait=true`` against ``desk.arun`` for the same one-turn scripted worker
  (median over ``RUNS`` runs): what the HTTP layer adds to a run;
- server-side fan-out (p50/p99) in the same paced runs: from ``config.emit`` to the moment
  the event's bytes were written to the connection's transport (its ``write`` returned:
  they are in the socket or its buffer) for the *last* of the clients, noted by a wrapper
  of each event stream's transport that an ASGI wrapper next to uvicorn puts in place (so
  it sees both uvicorn's ``send`` and a stream's direct writes). It leaves out the
  clients' processes and the scheduler's delay in waking them, so it is the part of the
  latency the server is responsible for;
- the CPU time the hub and the event streams spend per event for 1 and for 50 streams of
  one run in one process, without HTTP, awaiting a write per stream (as through ``send``)
  and writing directly (as to uvicorn's transport): deskwork's own share of fan-out, which
  a loaded machine does not blur the way it blurs latencies.

Run: ``python bench/serve.py`` (prints markdown tables); ``python bench/serve.py --fan-out``
measures only the paced fan-out (for A/B runs against another checkout on ``PYTHONPATH``);
``--breakdown`` splits each paced event's time from emit to the last client's transport
into its segments inside the server (:class:`Probe`), with the garbage collections that
overlapped it. The server process is tuned as ``deskwork serve`` tunes its own (startup
objects frozen out of the garbage collector, a 1 ms switch interval; ``--untuned``: not).
``--gil`` measures how late a timer on a loop thread fires next to a thread busy running
Python, at switch intervals of 5, 1 and 0.5 ms. On a machine with few cores, the client
processes the server has just written to preempt its thread in the middle of the fan-out
(``--breakdown`` shows it as time off the CPU in the delivery); ``--nice-clients`` runs them
at a lower priority, and ``--split-cores`` on a core of their own (the server keeps the
others), both closer to clients on other machines; with every client on one core, the
clients' own p99 then includes that core reading 50 streams in turn.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import math
import multiprocessing as mp
import os
import re
import statistics
import sys
import threading
import time
from array import array
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

from deskwork import Desk, Job, Worker
from deskwork.core.event import Event
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig
from deskwork.serve import create_app
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter

EVENTS = 2000
PACED_EVENTS = 400
PACE = 0.005
REPEATS = 5
RUNS = 200
PER_PROCESS = 13
CLIENT_PROCESSES = 4
NICE_CLIENTS = 15
"""The client processes' niceness with ``--nice-clients``: the scheduler then lets them
preempt the server's thread less often, as clients on other machines never do."""
GO = threading.Event()
MODE = {"events": EVENTS, "pace": 0.0}


class Emitter:
    """A runner that waits for the clients, then emits ``MODE["events"]`` events."""

    name = "emitter"
    runner_type = "bench"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        while not GO.is_set():
            await asyncio.sleep(0.002)
        for i in range(int(MODE["events"])):
            config.emit("bench.tick", self.name, {"i": i, "t": time.perf_counter()})
            if MODE["pace"]:
                await asyncio.sleep(MODE["pace"])
            elif i % 50 == 0:
                await asyncio.sleep(0)  # let the server write to its clients
        state = RunState(
            run_id=config.run_id, status="completed", runner_type="bench", runner_name="emitter",
            job=job.to_state(),
        )  # fmt: skip
        return Report(run_id=config.run_id, status="completed", content="done"), state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Any = None
    ) -> Any:
        raise NotImplementedError


def _desk() -> Desk:
    desk = Desk(
        model="scripted/bench",
        adapter=ScriptedAdapter(default="ok"),
        run_store=InMemoryRunStore(),
    )
    desk.register(Emitter())
    desk.register(Worker(name="echo", instructions="Answer."))
    return desk


# -- clients: in other processes --------------------------------------------------------


class SSEReader(asyncio.Protocol):
    """One event stream read as a browser's ``EventSource`` reads it, with little Python per
    event: the HTTP/1.1 response's chunked body is decoded, every line of the stream is
    parsed (``data``, ``id``, ``event``, comments; CRLF, LF or CR line ends), and every
    event's data is parsed as JSON when it is dispatched, as a viewer's ``onmessage`` does.
    A ``bench.tick`` event's latency is taken after its JSON was parsed."""

    def __init__(self, request: bytes, done: asyncio.Future[None]) -> None:
        self.request = request
        self.done = done
        self.latencies: list[float] = []
        self._raw = b""
        self._head = True
        self._decode = codecs.getincrementaldecoder("utf-8")().decode
        self._text = ""
        self._data: list[str] = []
        self._type = ""
        self.last_id = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        raw = self._raw + data
        if self._head:
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                self._raw = raw
                return
            head = raw[:end].lower()
            assert head.startswith(b"http/1.1 200") and b"transfer-encoding: chunked" in head
            raw, self._head = raw[end + 4 :], False
        body, ended = [], False
        while (eol := raw.find(b"\r\n")) >= 0:
            size = int(raw[:eol], 16)
            if len(raw) < eol + size + 4:
                break
            ended = size == 0  # the last chunk: read what came before it first
            body.append(raw[eol + 2 : eol + 2 + size])
            raw = raw[eol + size + 4 :]
        self._raw = raw
        if body:
            self._lines(self._decode(b"".join(body)))
        if ended:
            self._finish()

    def _lines(self, text: str) -> None:
        text = self._text + text
        lines = _LINE_END.split(text)
        self._text = lines.pop()  # the rest of the text after the last line end
        if text.endswith("\r"):  # a CR whose LF may come next: its line waits for it
            self._text = lines.pop() + "\r"
        for line in lines:
            if not line:
                self._dispatch()
            elif line[0] != ":":
                name, _, value = line.partition(":")
                value = value[1:] if value[:1] == " " else value
                if name == "data":
                    self._data.append(value)
                elif name == "id":
                    self.last_id = value
                elif name == "event":
                    self._type = value

    def _dispatch(self) -> None:
        data, kind = self._data, self._type or "message"
        self._data, self._type = [], ""
        if not data:
            return
        parsed = json.loads("\n".join(data))
        if kind == "message" and parsed["type"] == "bench.tick":
            self.latencies.append(time.perf_counter() - parsed["payload"]["t"])

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()


_LINE_END = re.compile("\r\n|\r|\n")


async def _read(url: str, run_id: str) -> dict[str, Any]:
    host, port = url.removeprefix("http://").split(":")
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    request = (f"GET /runs/{run_id}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()  # fmt: skip
    transport, reader = await loop.create_connection(
        lambda: SSEReader(request, done), host, int(port)
    )
    await done
    transport.close()
    return {"latencies": reader.latencies, "end": time.perf_counter()}


async def _stream(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    latencies: list[float] = []
    async with client.stream("GET", f"/runs/{run_id}/events") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: ") and '"bench.tick"' in line:
                now = time.perf_counter()
                latencies.append(now - json.loads(line[6:])["payload"]["t"])
    return {"latencies": latencies, "end": time.perf_counter()}


async def _streams(url: str, run_id: str, count: int, reader: str) -> list[dict[str, Any]]:
    if reader == "raw":
        return await asyncio.gather(*(_read(url, run_id) for _ in range(count)))
    limits = httpx.Limits(max_connections=count + 2)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        return await asyncio.gather(*(_stream(client, run_id) for _ in range(count)))


def _client_process(
    commands: Any, results: Any, nice: int, reader: str, cpus: set[int] | None
) -> None:
    """Follow runs as told: ``(url, run_id, streams)``; answer each stream's latencies,
    with the CPU time the process took (on the first stream's figures)."""
    os.nice(nice)
    if cpus:
        os.sched_setaffinity(0, cpus)
    while (command := commands.get()) is not None:
        url, run_id, count = command
        cpu = time.process_time()
        streams = asyncio.run(_streams(url, run_id, count, reader))
        streams[0]["cpu"] = time.process_time() - cpu
        results.put(streams)


class Clients:
    """A pool of client processes."""

    def __init__(
        self, processes: int, nice: int = 0, reader: str = "raw", cpus: set[int] | None = None
    ) -> None:
        ctx = mp.get_context("spawn")
        self.nice = nice
        self.reader = reader
        self.cpus = cpus
        self.results = ctx.Queue()
        self.commands = [ctx.Queue() for _ in range(processes)]
        self.procs = [
            ctx.Process(
                target=_client_process, args=(q, self.results, nice, reader, cpus), daemon=True
            )
            for q in self.commands
        ]
        for proc in self.procs:
            proc.start()

    def follow(self, url: str, run_id: str, clients: int) -> int:
        """Start ``clients`` streams over the processes; the number of processes used."""
        used = min(len(self.commands), math.ceil(clients / PER_PROCESS))
        shares = [clients // used + (i < clients % used) for i in range(used)]
        for queue, share in zip(self.commands, shares, strict=False):
            queue.put((url, run_id, share))
        return used

    def collect(self, used: int) -> list[dict[str, Any]]:
        return [s for _ in range(used) for s in self.results.get(timeout=300)]

    def close(self) -> None:
        for queue in self.commands:
            queue.put(None)
        for proc in self.procs:
            proc.join(timeout=10)


# -- the server: in this process -----------------------------------------------------------


_TICK = re.compile(rb'"payload":\{"i":(\d+),"t":([-+.e\d]+)\}')
"""A ``bench.tick`` event in a frame: its number and its emit time."""


class WriteLog:
    """The writes to the event streams' transports: connection, time, data. Kept in arrays
    and a list of bytes, objects the garbage collector does not track, so that noting 50
    writes per event does not itself set off collections in the server."""

    def __init__(self) -> None:
        self.connections = array("l")
        self.times = array("d")
        self.bodies: list[bytes] = []

    def add(self, connection: int, at: float, data: bytes) -> None:
        self.connections.append(connection)
        self.times.append(at)
        self.bodies.append(data)

    def __iter__(self) -> Iterator[tuple[int, float, bytes]]:
        return zip(self.connections, self.times, self.bodies, strict=True)


class TimedTransport:
    """A connection's transport that notes when each write returned."""

    def __init__(self, transport: Any, clock: WriteClock, connection: int) -> None:
        self._transport = transport
        self._clock = clock
        self._connection = connection
        self.is_closing = transport.is_closing  # asked before each direct write: no __getattr__

    def write(self, data: bytes) -> None:
        self._transport.write(data)
        log = self._clock.log
        if log is not None:
            log.add(self._connection, time.perf_counter(), data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class WriteClock:
    """ASGI wrapper next to uvicorn: while ``log`` is a list, notes when each write of an
    event stream to its transport returned, per connection. The transport of the stream's
    uvicorn request cycle (``receive.__self__``, as ``serve._direct`` finds it) is wrapped,
    so uvicorn's ``send`` and the stream's direct writes are both seen."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.log: WriteLog | None = None
        self._connections = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/events"):
            self._connections += 1
            cycle = receive.__self__  # uvicorn's httptools request cycle
            cycle.transport = TimedTransport(cycle.transport, self, self._connections)
        await self.app(scope, receive, send)

    def fan_out(self, events: int) -> list[float]:
        """Per event: seconds from its emit to its bytes handed over for the last client."""
        log, self.log = self.log or WriteLog(), None
        handed: dict[int, dict[int, float]] = defaultdict(dict)  # event -> connection -> t
        emitted: dict[int, float] = {}
        for connection, at, body in log:
            for match in _TICK.finditer(body):
                i = int(match[1])
                emitted[i] = float(match[2])
                handed[i].setdefault(connection, at)
        clients = max(len(c) for c in handed.values())
        assert len(handed) == events and all(len(c) == clients for c in handed.values())
        return sorted(max(handed[i].values()) - emitted[i] for i in handed)


class Probe:
    """Per-event timestamps inside the server, for ``--breakdown``: when the hub got the
    event from the bus (after the store's commit), when its delivery started and ended
    (wall and the server thread's CPU clock), and every garbage collection (``gc.callbacks``).
    Installed by wrapping the hub's entry points, so the server's code is unchanged."""

    def __init__(self) -> None:
        self.on: bool = False
        self.hub: dict[int, float] = {}
        self.deliver: dict[int, tuple[float, float, float, float]] = {}
        self.gc: list[tuple[float, float, int]] = []
        self._gc_start = 0.0
        self.found: list[dict[str, Any]] = []
        """What :meth:`segments` found in each fan-out."""

    def install(self) -> None:
        import gc

        from deskwork.serve import _hub

        on_event, deliver = _hub.EventHub._on_event, _hub._deliver

        def timed_on_event(hub: _hub.EventHub, event: Event) -> None:
            if self.on and event.type == "bench.tick":
                self.hub[event.payload["i"]] = time.perf_counter()
            on_event(hub, event)

        def timed_deliver(targets: list[_hub.Subscription], item: _hub.Outgoing) -> None:
            start, cpu = time.perf_counter(), time.thread_time()
            deliver(targets, item)
            if self.on and item.event.type == "bench.tick":
                end = time.perf_counter()
                self.deliver[item.event.payload["i"]] = (start, cpu, end, time.thread_time())

        # a plain function in place of the method (mypy sees the self argument twice)
        _hub.EventHub._on_event = timed_on_event  # type: ignore[method-assign,assignment]
        _hub._deliver = timed_deliver
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self.on:
            self.gc.append((self._gc_start, time.perf_counter(), info["generation"]))

    def start(self) -> None:
        self.hub, self.deliver, self.gc, self.on = {}, {}, [], True

    def segments(self, log: WriteLog, clients: int) -> dict[str, Any]:
        """Per event, in seconds: emit→hub, hub→delivery, delivery→first write, first→last
        write, time off the CPU during the delivery, GC during emit→last write; and the
        garbage collections and the sizes of the writes."""
        self.on = False
        writes: dict[int, list[float]] = defaultdict(list)
        emitted: dict[int, float] = {}
        for _, at, body in log:
            for match in _TICK.finditer(body):
                writes[int(match[1])].append(at)
                emitted[int(match[1])] = float(match[2])
        out = {}
        for i, times in writes.items():
            if i not in self.hub or i not in self.deliver:
                continue
            start, cpu, end, cpu_end = self.deliver[i]
            first, last = min(times), max(times)
            gc_s = sum(min(b, last) - max(a, emitted[i]) for a, b, _ in self.gc
                       if b > emitted[i] and a < last)  # fmt: skip
            out[i] = {
                "emit→hub": self.hub[i] - emitted[i],
                "hub→delivery": start - self.hub[i],
                "delivery→first write": first - start,
                "first→last write": last - first,
                "CPU in delivery": cpu_end - cpu,
                "off CPU in delivery": (end - start) - (cpu_end - cpu),
                "GC in emit→last write": gc_s,
                "emit→last write": last - emitted[i],
            }
        sizes = sorted(len(body) for body in log.bodies)
        return {"clients": clients, "events": out, "gc": self.gc, "sizes": sizes}


class Served:
    """uvicorn serving ``desk`` in a thread of this process."""

    def __init__(self, desk: Desk, *, tune: bool = True) -> None:
        self.app = create_app(desk)
        if tune:  # as ``deskwork serve`` does before it runs uvicorn (serve._server)
            import gc

            gc.collect()
            gc.freeze()
            sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        self.clock = WriteClock(self.app)
        config = uvicorn.Config(self.clock, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def cpu(self) -> float:
        """CPU seconds the server's thread has used (its event loop: the whole server)."""
        assert self.thread.ident is not None
        return time.clock_gettime(time.pthread_getcpuclockid(self.thread.ident))


def fan_out(
    served: Served,
    pool: Clients,
    clients: int,
    events: int,
    pace: float,
    probe: Probe | None = None,
) -> dict[str, float]:
    GO.clear()
    MODE.update(events=events, pace=pace)
    body = {"runner": "emitter", "job": {"input": "go"}}
    run_id = httpx.post(served.url + "/runs", json=body, timeout=30).json()["run_id"]
    used = pool.follow(served.url, run_id, clients)
    hub = served.app.state.services()[0].hub
    while hub.subscribers(run_id) < clients:  # every stream is following the run
        time.sleep(0.005)
    log = served.clock.log = WriteLog()
    if probe is not None:
        probe.start()
    cpu = served.cpu()
    start = time.perf_counter()
    GO.set()
    streams = pool.collect(used)
    cpu = served.cpu() - cpu
    handed = served.clock.fan_out(events)
    if probe is not None:
        probe.found.append(probe.segments(log, clients))
    assert all(len(s["latencies"]) == events for s in streams), "a client missed events"
    client_cpu = sum(s.get("cpu", 0.0) for s in streams)
    latencies = sorted(x for s in streams for x in s["latencies"])
    elapsed = max(s["end"] for s in streams) - start
    return {
        "events_per_s": events * clients / elapsed,
        "p50_ms": 1000 * _quantile(latencies, 0.5),
        "p99_ms": 1000 * _quantile(latencies, 0.99),
        "cpu_ms_per_event": 1000 * cpu / events,
        "client_cpu_us_per_stream_event": 1e6 * client_cpu / (events * clients),
        "server_p50_ms": 1000 * _quantile(handed, 0.5),
        "server_p99_ms": 1000 * _quantile(handed, 0.99),
    }


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[int(len(ordered) * q)]


class _NullTransport:
    """A transport that takes every write and drops it."""

    def write(self, data: bytes) -> None:
        pass

    def is_closing(self) -> bool:
        return False


async def _stream_cost(clients: int, events: int, direct: bool) -> float:
    """CPU microseconds per event to hand it to ``clients`` event streams of one run in
    this process (the hub and the SSE frames, without HTTP or sockets), awaiting a write
    per stream or writing directly to a transport."""
    from types import SimpleNamespace

    from deskwork.core.event import EventType
    from deskwork.serve._direct import DirectWriter
    from deskwork.serve._hub import EventHub
    from deskwork.serve._service import RunService

    desk = _desk()
    hub = EventHub(desk.event_bus, asyncio.get_running_loop(), 0.5)
    service = RunService(desk, {}, hub)
    desk.run_store.begin_run("cost", {"input": "x"})
    emit = desk.config("cost").emit
    emit(EventType.RUN_STARTED, "bench", {})

    async def write(_: bytes) -> None:
        pass

    async def consume() -> None:
        sub = hub.subscribe("cost")
        cycle = SimpleNamespace(disconnected=False, response_complete=False,
                                flow=SimpleNamespace(write_paused=False),
                                transport=_NullTransport())  # fmt: skip
        try:
            await service.follow_run(
                "cost", -1, sub, write, DirectWriter(cycle) if direct else None
            )
        finally:
            sub.close()

    streams = [asyncio.create_task(consume()) for _ in range(clients)]
    await asyncio.sleep(0.05)
    start = time.process_time()
    for i in range(events):
        emit("bench.tick", "bench", {"i": i, "t": time.perf_counter()})
        await asyncio.sleep(0)  # the streams take it
        await asyncio.sleep(0)  # ... and write it
    emit(EventType.RUN_COMPLETED, "bench", {})
    await asyncio.gather(*streams)
    return 1e6 * (time.process_time() - start) / events


def stream_cost() -> dict[tuple[int, bool], float]:
    """:func:`_stream_cost` for 1 and 50 streams, awaiting writes and writing directly, the
    best of ``REPEATS`` runs each."""
    return {
        (n, direct): min(asyncio.run(_stream_cost(n, EVENTS, direct)) for _ in range(REPEATS))
        for n in (1, 50)
        for direct in (False, True)
    }


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


async def http_overhead(url: str) -> dict[str, float]:
    direct_desk = _desk()
    worker = Worker(name="echo", instructions="Answer.")
    direct, over_http = [], []
    for _ in range(20):  # warm up both paths
        await direct_desk.arun(worker, Job(input="hi"))
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        body = {"runner": "echo", "job": {"input": "hi"}}
        for _ in range(20):
            await client.post("/runs?wait=true", json=body)
        for _ in range(RUNS):
            t = time.perf_counter()
            await direct_desk.arun(worker, Job(input="hi"))
            direct.append(time.perf_counter() - t)
            t = time.perf_counter()
            response = await client.post("/runs?wait=true", json=body)
            over_http.append(time.perf_counter() - t)
            assert response.json()["status"] == "completed"
    d, h = statistics.median(direct), statistics.median(over_http)
    return {"direct_ms": 1000 * d, "http_ms": 1000 * h, "overhead_ms": 1000 * (h - d)}


def _measure(served: Served, pool: Clients, *, burst: bool = True) -> dict[Any, Any]:
    fan_out(served, pool, 50, 100, PACE)  # warm up
    out: dict[Any, Any] = {}
    for n in (1, 50):
        if burst:
            out[("burst", n)] = _median(
                [fan_out(served, pool, n, EVENTS, 0.0) for _ in range(REPEATS)]
            )
        paced = [fan_out(served, pool, n, PACED_EVENTS, PACE) for _ in range(REPEATS)]
        out[("paced", n)] = _median(paced)
    return out


def _print_fan_out(figures: dict[Any, Any], pool: Clients) -> None:
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f};"
          f" {pool.reader} clients in {CLIENT_PROCESSES} processes at nice {pool.nice}"
          f"{f' on CPU {sorted(pool.cpus)}' if pool.cpus else ''};"
          f" medians of {REPEATS} runs\n")  # fmt: skip
    burst = ("burst", 1) in figures
    rates = f" burst: events/s delivered ({EVENTS:,} events) |" if burst else ""
    print(f"| SSE clients |{rates}"
          f" paced ({1 / PACE:.0f} events/s): p50 emit→client | p99 |"
          " p50 emit→written to the transport, last client | p99 |"
          " server CPU per event | client CPU per stream and event |")  # fmt: skip
    print("|---:|" + ("---:|" if burst else "") + "---:|---:|---:|---:|---:|---:|")
    for n in (1, 50):
        p = figures[("paced", n)]
        rate = f" {figures[('burst', n)]['events_per_s']:,.0f} |" if burst else ""
        print(f"| {n} |{rate} {p['p50_ms']:.2f} ms | {p['p99_ms']:.2f} ms |"
              f" {p['server_p50_ms']:.3f} ms | {p['server_p99_ms']:.3f} ms |"
              f" {p['cpu_ms_per_event']:.3f} ms |"
              f" {p['client_cpu_us_per_stream_event']:.0f} µs |")  # fmt: skip
    one, fifty = figures[("paced", 1)], figures[("paced", 50)]

    def added(key: str) -> float:
        return float(fifty[key] - one[key])

    print(f"\nadded by fan-out to 50 clients: emit→client p50 {added('p50_ms'):.2f} ms,"
          f" p99 {added('p99_ms'):.2f} ms; emit→written to the transport (server side)"
          f" p50 {added('server_p50_ms'):.3f} ms, p99 {added('server_p99_ms'):.3f} ms;"
          f" server CPU {added('cpu_ms_per_event'):.3f} ms per event\n")  # fmt: skip


def breakdown(served: Served, pool: Clients, probe: Probe) -> None:
    """Paced fan-out to 1 and 50 clients, ``REPEATS`` times each, with ``probe`` on: print
    where each event's time from emit to the last client's transport went."""
    fan_out(served, pool, 50, 100, PACE)  # warm up
    for clients in (1, 50):
        probe.found = []
        for _ in range(REPEATS):
            fan_out(served, pool, clients, PACED_EVENTS, PACE, probe)
        _print_breakdown(probe.found, pool.nice)


def _print_breakdown(found: list[dict[str, Any]], nice: int) -> None:
    events = [e for f in found for e in f["events"].values()]
    slowest = sorted(events, key=lambda e: e["emit→last write"])[-max(1, len(events) // 100) :]
    gcs = [g for f in found for g in f["gc"]]
    sizes = sorted(size for f in found for size in f["sizes"])
    print(f"\n{found[0]['clients']} clients at nice {nice}, load average"
          f" {os.getloadavg()[0]:.2f}, {len(events)} paced events ({len(found)} runs):"
          f" writes of {sizes[len(sizes) // 2]} bytes (median), {sizes[-1]} at most;"
          f" {len(gcs)} collections (gen 0/1/2:"
          f" {'/'.join(str(sum(g[2] == n for g in gcs)) for n in range(3))}),"
          f" longest {1000 * max((b - a for a, b, _ in gcs), default=0):.2f} ms\n")  # fmt: skip
    for n in range(3):
        took = sorted(1000 * (b - a) for a, b, g in gcs if g == n)
        if took:
            print(f"gen {n}: median {statistics.median(took):.3f} ms, max {took[-1]:.3f} ms")
    print()
    print("| segment (ms) | p50 | p99 | mean of the slowest 1% of events |")
    print("|---|---:|---:|---:|")
    for key in events[0]:
        ordered = sorted(e[key] for e in events)
        mean = statistics.mean(e[key] for e in slowest)
        print(f"| {key} | {1000 * _quantile(ordered, 0.5):.3f} |"
              f" {1000 * _quantile(ordered, 0.99):.3f} | {1000 * mean:.3f} |")  # fmt: skip


def loop_lateness(interval: float, busy: bool, timers: int = 400) -> tuple[float, float]:
    """p50 and p99 seconds by which a 3 ms timer on an event loop in its own thread fires
    late, at GIL switch interval ``interval``, with or without a thread busy running
    Python (a sync tool computing, say) in the process."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(200))

    late: list[float] = []

    async def timers_on_loop() -> None:
        loop = asyncio.get_running_loop()
        for _ in range(timers):
            due = time.perf_counter() + 0.003
            fired = loop.create_future()
            loop.call_later(0.003, fired.set_result, None)
            await fired
            late.append(time.perf_counter() - due)

    spinner = threading.Thread(target=spin, daemon=True)
    if busy:
        spinner.start()
    runner = threading.Thread(target=asyncio.run, args=(timers_on_loop(),))
    runner.start()
    runner.join()
    stop.set()
    sys.setswitchinterval(previous)
    late.sort()
    return _quantile(late, 0.5), _quantile(late, 0.99)


def _print_gil() -> None:
    print("| busy thread | switch interval | timer late p50 | p99 |")
    print("|---|---:|---:|---:|")
    for busy in (False, True):
        for interval in (0.005, 0.001, 0.0005):
            p50, p99 = loop_lateness(interval, busy)
            print(f"| {'yes' if busy else 'no'} | {1000 * interval:.1f} ms |"
                  f" {1000 * p50:.3f} ms | {1000 * p99:.3f} ms |")  # fmt: skip


def _split_cores() -> set[int]:
    """With ``--split-cores``: this process (the server) keeps every core but the last, and
    the client processes get the last one, so the clients the server has just written to
    cannot preempt its thread mid fan-out, as clients on other machines never do."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--split-cores needs at least 2 cores")
    os.sched_setaffinity(0, cpus[:-1])
    return {cpus[-1]}


def main(argv: list[str]) -> None:
    if "--gil" in argv:
        _print_gil()
        return
    if "--breakdown" in argv:
        probe = Probe()
        probe.install()
    nice = NICE_CLIENTS if "--nice-clients" in argv else 0
    reader = "httpx" if "--httpx-clients" in argv else "raw"
    cpus = _split_cores() if "--split-cores" in argv else None
    pool = Clients(CLIENT_PROCESSES, nice, reader, cpus)
    served = Served(_desk(), tune="--untuned" not in argv)
    only_fan_out = "--fan-out" in argv
    try:
        if "--breakdown" in argv:
            breakdown(served, pool, probe)
            return
        figures = _measure(served, pool, burst=not only_fan_out)
        if not only_fan_out:
            overhead = asyncio.run(http_overhead(served.url))
            cost = stream_cost()
    finally:
        served.server.should_exit = True
        pool.close()
    _print_fan_out(figures, pool)
    if only_fan_out:
        return
    print("| streams of one run, in process | writes | CPU per event (best of 5) |"
          " per added stream |")  # fmt: skip
    print("|---:|---|---:|---:|")
    for direct in (False, True):
        how = "direct" if direct else "awaited"
        one, fifty = cost[(1, direct)], cost[(50, direct)]
        print(f"| 1 | {how} | {one:.1f} µs | |")
        print(f"| 50 | {how} | {fifty:.1f} µs | {(fifty - one) / 49:.1f} µs |")
    print()
    print(f"| one-turn run ({RUNS} runs, median) | desk.arun | POST /runs?wait=true | overhead |")
    print("|---|---:|---:|---:|")
    print(
        f"| scripted worker | {overhead['direct_ms']:.2f} ms | {overhead['http_ms']:.2f} ms |"
        f" {overhead['overhead_ms']:.2f} ms |"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
