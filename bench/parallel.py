"""Parallelism benchmark (issue: coordination on the runtime).

Scenario: ten tool-less workers answer the same job on a scripted model whose every call
takes 100 ms, through a Desk with an in-memory run store:
(a) a ``Workforce(mode="collaborate")`` (tool-less members run concurrently),
(b) one workflow ``Parallel`` of ten ``Step``s,
(c) the same ten ``Step``s in series (the serial reference).
Ideal numbers: ~0.1 s for (a) and (b), ~1.0 s for (c), so a ratio of ~10x.

Run: ``python bench/parallel.py`` (prints a markdown table; medians of 5 runs).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence

from deskwork import Desk, Job, Worker, Workforce
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.workflow import Node, Parallel, Step

WORKERS = 10
LATENCY_S = 0.1
REPEATS = 5


def _desk() -> Desk:
    adapter = ScriptedAdapter(default=reply("ok"), latency=LATENCY_S)
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())


def _steps() -> list[Step]:
    return [Step(Worker(name=f"w{i}", instructions=f"Worker {i}.")) for i in range(WORKERS)]


async def _median_seconds(nodes: Sequence[Node]) -> float:
    desk = _desk()
    flow = desk.flow(nodes)
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        report = await flow.arun(Job(input="Review the proposal."))
        samples.append(time.perf_counter() - started)
        if report.status != "completed" or report.metrics.get("steps") != WORKERS:
            raise RuntimeError(f"benchmark run did not complete: {report.errors}")
    return statistics.median(samples)


async def _collaborate_seconds() -> float:
    desk = _desk()
    workers = [Worker(name=f"w{i}", instructions=f"Worker {i}.") for i in range(WORKERS)]
    team = Workforce(workers, mode="collaborate")
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        report = await desk.arun(team, Job(input="Review the proposal."))
        samples.append(time.perf_counter() - started)
        if report.status != "completed" or report.metrics.get("llm_calls") != WORKERS:
            raise RuntimeError(f"benchmark run did not complete: {report.errors}")
    return statistics.median(samples)


async def main() -> None:
    """Print a markdown table: each concurrent style against the serial reference."""
    series = await _median_seconds(_steps())
    rows = [
        ("Workforce(mode='collaborate')", await _collaborate_seconds()),
        ("workflow Parallel of 10 Steps", await _median_seconds([Parallel(*_steps())])),
    ]
    label = f"{WORKERS} tool-less workers, {LATENCY_S * 1000:.0f} ms per model call"
    print(f"{label}; serial reference (10 Steps in series): {series:.3f} s")
    print()
    print("| runner | median s | serial / concurrent |")
    print("|---|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {series / seconds:.1f}x |")


if __name__ == "__main__":
    asyncio.run(main())
