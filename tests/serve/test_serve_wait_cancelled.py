"""A client waiting for a run (``?wait=true``) that another client cancels gets the run's
report, ended ``failed`` with ``run cancelled``; it got a 500 (the run's task was cancelled
and the wait re-raised it)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import Turn, call_tool, reply
from deskwork.tools.base import tool


@tool(requires_confirmation=True, description="Ship an order (slowly)")
async def ship(item: str) -> str:
    await asyncio.sleep(5)
    return f"shipped {item}"


def _ship_first(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    return call_tool("ship", item="beans") if messages[-1]["role"] == "user" else reply("ok")


def _desk() -> Desk:
    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=_ship_first),
                run_store=InMemoryRunStore())  # fmt: skip
    desk.register(Worker(name="shipper", tools=[ship], instructions="Ship."))
    return desk


async def _cancel_while_waiting(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], run_id: str | None
) -> httpx.Response:
    waiting = asyncio.ensure_future(client.post(path, json=body))
    while run_id is None:
        running = (await client.get("/runs?status=running")).json()["runs"]
        run_id = running[0]["run_id"] if running else None
    await asyncio.sleep(0.3)
    assert (await client.post(f"/runs/{run_id}/cancel")).status_code == 200
    return await waiting


async def test_a_waited_start_cancelled_by_another_client_answers_its_report(
    live_factory: Any,
) -> None:
    live = live_factory()
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        body = {"runner": "sleeper", "job": {"input": "5"}}
        answer = await _cancel_while_waiting(client, "/runs?wait=true", body, None)
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "failed"
        assert answer.json()["errors"] == ["run cancelled"]


async def test_a_waited_resume_cancelled_by_another_client_answers_its_report(
    live_factory: Any,
) -> None:
    live = live_factory(_desk())
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        paused = await client.post(
            "/runs?wait=true", json={"runner": "shipper", "job": {"input": "go"}}
        )
        run_id = paused.json()["run_id"]
        path = f"/runs/{run_id}/resume?wait=true"
        answer = await _cancel_while_waiting(client, path, {"decision": True}, run_id)
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "failed"
        assert answer.json()["errors"] == ["run cancelled"]
