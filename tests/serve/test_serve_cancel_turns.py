"""Runs a session message or an AG-UI request started are runs of this server like any
other: ``POST /runs/{id}/cancel`` cancels them (it answered 409, "not running in this
server"), and the request that runs them answers with the run ended ``failed``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from serve_support import Live, parse_sse


async def _cancel_the_running_run(client: httpx.AsyncClient) -> str:
    for _ in range(500):
        running = (await client.get("/runs?status=running")).json()["runs"]
        if running:
            break
        await asyncio.sleep(0.01)
    run_id: str = running[0]["run_id"]
    await asyncio.sleep(0.2)
    cancelled = await client.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "failed"
    return run_id


async def _session(client: httpx.AsyncClient) -> str:
    session_id: str = (await client.post("/sessions", json={"runner": "sleeper"})).json()[
        "session_id"
    ]
    return session_id


async def test_a_session_message_can_be_cancelled(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        path = f"/sessions/{await _session(client)}/messages"
        body = {"message": "5", "stream": "none"}
        sent = asyncio.ensure_future(client.post(path, json=body))
        run_id = await _cancel_the_running_run(client)
        answer = await sent
        assert answer.status_code == 200, answer.text
        assert answer.json()["run_id"] == run_id
        assert answer.json()["status"] == "failed" and answer.json()["errors"] == ["run cancelled"]


async def test_a_streamed_session_message_can_be_cancelled(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        path = f"/sessions/{await _session(client)}/messages"
        sent = asyncio.ensure_future(client.post(path, json={"message": "5"}))
        await _cancel_the_running_run(client)
        end = parse_sse((await sent).text)[-1]
        assert end["event"] == "end" and end["data"]["status"] == "failed"


async def test_an_agui_run_can_be_cancelled(live: Live) -> None:
    body: dict[str, Any] = {
        "threadId": "t",
        "runId": "agui-run",
        "messages": [{"id": "m", "role": "user", "content": "5"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        sent = asyncio.ensure_future(client.post("/agui/sleeper", json=body))
        assert await _cancel_the_running_run(client) == "agui-run"
        last = parse_sse((await sent).text)[-1]["data"]
        assert last == {"type": "RUN_ERROR", "message": "run cancelled"}
