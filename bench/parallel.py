"""Workflow parallelism benchmark (issue: coordination on the runtime, part B).

Scenario: ten tool-less workers answer the same job (a collaborate-style run) on a scripted
model whose every call takes 100 ms. Runs them (a) as one ``Parallel`` of ten ``Step``s and
(b) as the same ten ``Step``s in series, each as one flow run through a Desk with an
in-memory run store. Ideal numbers: ~0.1 s in parallel, ~1.0 s in series (ratio ~10x).

Run: ``python bench/parallel.py`` (prints a markdown table row; medians of 5 runs).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence

from deskwork import Desk, Job, Worker
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


async def main() -> None:
    """Print the header and one markdown table row."""
    parallel = await _median_seconds([Parallel(*_steps())])
    series = await _median_seconds(_steps())
    print("| scenario | Parallel (median s) | series (median s) | speed-up |")
    print("|---|---|---|---|")
    print(
        f"| {WORKERS} tool-less workers, {LATENCY_S * 1000:.0f} ms per model call "
        f"| {parallel:.3f} | {series:.3f} | {series / parallel:.1f}x |"
    )


if __name__ == "__main__":
    asyncio.run(main())
