"""``deskwork serve`` benchmark: event fan-out over Server-Sent Events and HTTP overhead.

Scenarios (server: uvicorn on 127.0.0.1 in a thread; clients: httpx in the main thread, in
the same process, so both share one machine and one GIL):

- events/s delivered to 1 and to 50 SSE clients following one run that emits ``EVENTS``
  events as fast as it can (each client reads every event);
- emit → client latency (p50/p99): each event carries ``perf_counter()`` at emission;
- ``POST /runs?wait=true`` against ``desk.arun`` for the same one-turn scripted worker
  (median over ``RUNS`` runs): what the HTTP layer adds to a run.

Run: ``python bench/serve.py`` (prints a markdown table).
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from typing import Any

import httpx
import uvicorn

from deskwork import Desk, Job, Worker
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.runtime.config import RunConfig
from deskwork.serve import create_app
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter

EVENTS = 2000
PACED_EVENTS = 300
PACE = 0.005
RUNS = 200
GO = threading.Event()
MODE = {"events": EVENTS, "pace": 0.0}


class Emitter:
    """A runner that waits for the clients, then emits ``EVENTS`` events."""

    name = "emitter"
    runner_type = "bench"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        while not GO.is_set():
            await asyncio.sleep(0.005)
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


def _serve(desk: Desk) -> tuple[str, uvicorn.Server]:
    server = uvicorn.Server(
        uvicorn.Config(create_app(desk), host="127.0.0.1", port=0, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}", server


async def _follow(client: httpx.AsyncClient, run_id: str, ready: asyncio.Event,
                  latencies: list[float]) -> tuple[int, float]:  # fmt: skip
    import json

    count = 0
    async with client.stream("GET", f"/runs/{run_id}/events") as stream:
        ready.set()
        async for line in stream.aiter_lines():
            if line.startswith("data: ") and '"bench.tick"' in line:
                now = time.perf_counter()
                latencies.append(now - json.loads(line[6:])["payload"]["t"])
                count += 1
    return count, time.perf_counter()


async def fan_out(url: str, clients: int, events: int, pace: float) -> dict[str, float]:
    GO.clear()
    MODE.update(events=events, pace=pace)
    limits = httpx.Limits(max_connections=clients + 5)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        run_id = (
            await client.post("/runs", json={"runner": "emitter", "job": {"input": "go"}})
        ).json()["run_id"]
        readies = [asyncio.Event() for _ in range(clients)]
        latencies: list[float] = []
        tasks = [asyncio.create_task(_follow(client, run_id, r, latencies)) for r in readies]
        for ready in readies:
            await ready.wait()
        await asyncio.sleep(0.2)  # the streams are subscribed
        start = time.perf_counter()
        GO.set()
        results = await asyncio.gather(*tasks)
    assert all(count == events for count, _ in results), [c for c, _ in results]
    elapsed = max(end for _, end in results) - start
    latencies.sort()
    return {
        "events_per_s": events * clients / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
    }


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


async def main() -> None:
    url, server = _serve(_desk())
    try:
        burst = [await fan_out(url, n, EVENTS, 0.0) for n in (1, 50)]
        paced = [await fan_out(url, n, PACED_EVENTS, PACE) for n in (1, 50)]
        overhead = await http_overhead(url)
    finally:
        server.should_exit = True
    print(f"| SSE clients | burst: events/s delivered ({EVENTS} events) |"
          f" paced ({1 / PACE:.0f} events/s): p50 latency | p99 latency |")  # fmt: skip
    print("|---:|---:|---:|---:|")
    for n, b, p in zip((1, 50), burst, paced, strict=True):
        print(f"| {n} | {b['events_per_s']:,.0f} | {p['p50_ms']:.2f} ms | {p['p99_ms']:.2f} ms |")
    print()
    print(f"| one-turn run ({RUNS} runs, median) | desk.arun | POST /runs?wait=true | overhead |")
    print("|---|---:|---:|---:|")
    print(
        f"| scripted worker | {overhead['direct_ms']:.2f} ms | {overhead['http_ms']:.2f} ms |"
        f" {overhead['overhead_ms']:.2f} ms |"
    )


if __name__ == "__main__":
    asyncio.run(main())
