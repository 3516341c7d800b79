"""A worker's last output is embedded into a vector memory store off the event loop.

Embedding a long reply takes seconds on a CPU; made on the loop, it stopped every other run,
stream and request of the process meanwhile.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")

from deskwork import Desk, Worker
from deskwork.memory import VectorMemoryStore
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply

EMBED_SECONDS = 0.6


class SlowEmbedding:
    """Vectors of a fixed size, after a pause as long as a real model's on a long text."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def __call__(self, input: list[str]) -> list[list[float]]:
        self.threads.append(threading.get_ident())
        time.sleep(EMBED_SECONDS)
        return [[float(len(text)), 1.0, 0.5] for text in input]


async def _ticks_during_run(desk: Desk) -> tuple[str, list[float]]:
    ticks: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.02)

    task = asyncio.create_task(ticker())
    try:
        report = await desk.arun(Worker(name="writer"), "write it")
    finally:
        done.set()
        await task
    return report.status, ticks


def test_the_last_output_is_embedded_off_the_loop_and_kept(tmp_path: Path) -> None:
    embedding = SlowEmbedding()
    store = VectorMemoryStore(tmp_path / "vec", embedding_function=embedding)
    desk = Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([reply("a long answer " * 50)]),
        run_store=InMemoryRunStore(),
        memory_store=store,
        storage_dir=tmp_path,
    )
    loop_thread = threading.get_ident()  # asyncio.run runs the loop on this thread

    status, ticks = asyncio.run(_ticks_during_run(desk))

    assert status == "completed"
    assert embedding.threads and loop_thread not in embedding.threads
    gaps = [later - earlier for earlier, later in itertools.pairwise(ticks)]
    # the loop went on while the reply was embedded (on it, one gap was the whole embedding)
    assert max(gaps) < EMBED_SECONDS * 0.75
    assert store.read("last_output", "worker:writer") == "a long answer " * 50
    store.close()
