"""Where the sync tool's thread hand-off (async API) spends its CPU (issue 13).

Scenario: an event loop calls a trivial sync function through ``ToolThreadPool.start`` (what
``await desk.arun`` does for a plain ``def`` tool) with ``GAP`` microseconds of Python work on
the loop's thread between calls (a run's own work), against calling it inline. Printed: the
process's CPU per hand-off (both threads) and the loop thread's share, with the pool thread on
the loop thread's CPU ("same CPU": the scheduler's choice on a busy machine) and on the other
CPU ("other CPU": its choice on an idle one, where each call wakes a sleeping thread on another
CPU twice: the pool thread, then the loop's thread). Linux with 2+ CPUs: the benchmark pins its
own two threads (``os.sched_setaffinity``) to place them; deskwork never pins a thread.

Run: ``python bench/handoff.py [ROUNDS] [GAP_US]`` (default 9 rounds of 500 calls, 100 µs).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time

from deskwork.tools._pool import ToolThreadPool

CALLS = 500


def _busy(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _add() -> int:
    return 2 + 3


async def _calls(pool: ToolThreadPool | None, gap: float) -> tuple[float, float]:
    """CPU seconds per call of the process and of the loop's thread, the gap excluded."""
    process, thread = time.process_time(), time.thread_time()
    for _ in range(CALLS):
        _busy(gap)
        if pool is None:
            _add()
        else:
            await pool.start(_add)
    return (
        (time.process_time() - process) / CALLS - gap,
        (time.thread_time() - thread) / CALLS - gap,
    )


def _pool_on(cpu: int) -> ToolThreadPool:
    """A one-thread pool whose thread runs on ``cpu``."""
    pool = ToolThreadPool(1, name="bench-handoff", idle_seconds=3600)

    async def pin() -> None:
        await pool.start(lambda: os.sched_setaffinity(0, {cpu}))

    asyncio.run(pin())
    return pool


def main(rounds: int, gap_us: float) -> None:
    if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs Linux and 2+ CPUs to place the threads")
    loop_cpu, other_cpu = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, {loop_cpu})  # this (the loop's) thread only
    gap = gap_us / 1e6
    contenders: dict[str, ToolThreadPool | None] = {
        "inline (no hand-off)": None,
        "hand-off, same CPU": _pool_on(loop_cpu),
        "hand-off, other CPU": _pool_on(other_cpu),
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for _ in range(rounds):  # interleaved: a noisy machine slows every contender alike
        for name, pool in contenders.items():
            samples[name].append(asyncio.run(_calls(pool, gap)))
    base = samples["inline (no hand-off)"]
    print(f"{rounds} interleaved rounds of {CALLS} calls, {gap_us:.0f} µs of loop work between"
          f" calls; load average {os.getloadavg()[0]:.1f}; medians over the rounds\n")  # fmt: skip
    print("| call | CPU per call over inline, process | of which the loop's thread |")
    print("|---|---:|---:|")
    for name, rows in samples.items():
        process, thread = (_over(rows, base, i) for i in (0, 1))
        print(f"| {name} | {process:.1f} µs | {thread:.1f} µs |")


def _over(rows: list[tuple[float, float]], base: list[tuple[float, float]], i: int) -> float:
    """Median over the rounds of a round's column ``i`` minus the inline call's, in µs."""
    return 1e6 * statistics.median(row[i] - ref[i] for row, ref in zip(rows, base, strict=True))


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 9,
        float(sys.argv[2]) if len(sys.argv) > 2 else 100.0,
    )
