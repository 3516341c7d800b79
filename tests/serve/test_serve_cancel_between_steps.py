"""A served durable run cancelled just after a model step: its event stream ends.

The cancel stores ``run.failed`` at once while the workflow goes on to its next step; the
events it emitted meanwhile were stored after the end, and the run's stream (which ends at
the run's end event) never sent ``end`` (test_serve_durable.py under load, 9f781de).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from serve_support import Live, make_desk, parse_sse, start_server

from cancelkit import workflows_done
from deskwork.core.event import RUN_END_EVENTS


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    desk = make_desk(database_url=f"sqlite:///{tmp_path / 'deskwork.db'}", durable=True)
    served, thread = start_server(desk)
    try:
        yield served
    finally:
        served.server.should_exit = True
        thread.join(timeout=30)
        desk.close()


async def test_a_run_cancelled_after_its_model_step_ends_its_stream(live: Live) -> None:
    cancelled: list[str] = []

    def cancel(event: Any) -> None:  # the model step is recorded: the cancel lands now
        if not cancelled:  # (the run runs on the server's loop: an HTTP cancel would wait)
            cancelled.append(event.run_id)
            # from a thread of its own, as the server's cancel does (outside the workflow)
            canceller = threading.Thread(target=live.desk.cancel, args=(event.run_id,))
            canceller.start()
            canceller.join()

    live.desk.event_bus.subscribe("llm.completed", cancel)
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as client:
        body = {"runner": "sleeper", "job": {"input": "0.1"}}
        run_id = (await client.post("/runs", json=body)).json()["run_id"]
        await asyncio.to_thread(workflows_done)  # the run goes on until it stops
        assert cancelled == [run_id]
        async with asyncio.timeout(120):  # a stream that never ends fails here
            frames = parse_sse((await client.get(f"/runs/{run_id}/events")).text)
        record = (await client.get(f"/runs/{run_id}")).json()
    assert frames[-1]["event"] == "end" and frames[-1]["data"]["status"] == "failed"
    assert (record["status"], record["errors"]) == ("failed", ["run cancelled"])
    types = [event.type for event in live.desk.run_store.get_events(run_id)]
    ends = [n for n, kind in enumerate(types) if kind in RUN_END_EVENTS]
    assert ends == [len(types) - 1] and types[-1] == "run.failed", types
