"""Parent and child runs come from the run store: runs another process started are linked."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from serve_support import Live, make_desk

from deskwork.core.job import Job


async def test_runs_another_process_nested_are_linked_both_ways(
    live_factory: Any, tmp_path: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    live = live_factory(make_desk(database_url=url))
    other = make_desk(database_url=url)  # as another process would: same database, own bus
    delegator = other.get_runner("worker", "delegator")
    assert delegator is not None
    report = await asyncio.to_thread(other.run, delegator, Job(input="x"), run_id="outer-1")
    assert report.content == "done: echo: beans"
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        parent = (await client.get("/runs/outer-1")).json()
        [child_id] = parent["child_run_ids"]
        child = (await client.get(f"/runs/{child_id}")).json()
        listed = (await client.get("/runs")).json()["runs"]
    assert parent["parent_run_id"] is None
    assert child["parent_run_id"] == "outer-1" and child["runner"] == "echo"
    assert child["child_run_ids"] == []
    assert {r["run_id"] for r in listed} == {"outer-1", child_id}
    other.close()


async def test_unrelated_runs_of_the_same_time_are_not_children(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        slow = await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.3"}})
        await client.post("/runs?wait=true", json={"runner": "echo", "job": {"input": "a"}})
        nested = await client.post(
            "/runs?wait=true", json={"runner": "delegator", "job": {"input": "b"}}
        )
        for _ in range(100):
            view = (await client.get(f"/runs/{slow.json()['run_id']}")).json()
            if view["status"] == "completed":
                break
            await asyncio.sleep(0.02)
        outer = (await client.get(f"/runs/{nested.json()['run_id']}")).json()
    assert view["status"] == "completed" and view["child_run_ids"] == []
    assert len(outer["child_run_ids"]) == 1
