"""The hub's event streams over real HTTP: what a client sees besides the events (headers,
keep-alives, auth, CORS), and what a client that goes away leaves behind (nothing)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from serve_support import Live, parse_sse

from deskwork.serve._hub import EventHub
from deskwork.serve._service import RunService


def _service(live: Live) -> RunService:
    app: Any = live.server.config.app
    service: RunService = app.state.services()[0]
    return service


def _hub(live: Live) -> EventHub:
    return _service(live).hub


async def _followers(live: Live, run_id: str | None, count: int) -> int:
    """The streams following ``run_id`` once they number ``count`` (or after 5 s)."""
    for _ in range(250):
        if _hub(live).subscribers(run_id) == count:
            break
        await asyncio.sleep(0.02)
    return _hub(live).subscribers(run_id)


async def _start(client: httpx.AsyncClient, seconds: str, **kw: Any) -> str:
    body = {"runner": "sleeper", "job": {"input": seconds}}
    run_id: str = (await client.post("/runs", json=body, **kw)).json()["run_id"]
    return run_id


async def test_a_client_that_leaves_an_idle_stream_is_unsubscribed(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = await _start(client, "1.5")
        async with client.stream("GET", f"/runs/{run_id}/events") as stream:
            assert stream.headers["content-type"] == "text/event-stream; charset=utf-8"
            assert stream.headers["cache-control"] == "no-cache"
            async for line in stream.aiter_lines():
                if "tool.started" in line:
                    break  # the run now sleeps: the stream waits with nothing to write
            assert _hub(live).subscribers(run_id) == 1
        assert await _followers(live, run_id, 0) == 0  # gone before the run ends
        assert (await client.get(f"/runs/{run_id}")).json()["status"] == "running"
        ended = await client.get(f"/runs/{run_id}/events")  # the run goes on to the end
        frames = parse_sse(ended.text)
        assert frames[-1] == {"id": None, "event": "end", "data": {"status": "completed"}}
        assert await _followers(live, run_id, 0) == 0


async def test_a_quiet_stream_sends_keepalive_comments(live: Live) -> None:
    _service(live).keepalive = 0.2  # two polls of the test server's store
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = await _start(client, "1")
        body = (await client.get(f"/runs/{run_id}/events")).text
    assert ": keepalive\n\n" in body
    assert parse_sse(body)[-1]["data"] == {"status": "completed"}


async def test_the_lifecycle_stream_follows_new_runs_until_the_client_leaves(
    live: Live,
) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        async with client.stream("GET", "/events") as stream:
            lines = stream.aiter_lines()
            assert await anext(lines) == ": connected"
            run_id = await _start(client, "0")
            seen = []
            async for line in lines:
                if line.startswith("data: ") and run_id in line:
                    seen.append(parse_sse(line + "\n\n")[0]["data"]["type"])
                if seen[-1:] == ["run.completed"]:
                    break
        assert seen == ["run.started", "run.completed"]  # run.* events only
        assert await _followers(live, None, 0) == 0


async def test_streams_need_the_token_and_carry_cors_headers(live_factory: Any) -> None:
    live = live_factory(token="t0k", cors_origins=["http://app.example"])
    auth = {"Authorization": "Bearer t0k", "Origin": "http://app.example"}
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = await _start(client, "0", headers=auth)
        for path in (f"/runs/{run_id}/events", "/events"):
            refused = await client.get(path, headers={"Origin": "http://app.example"})
            assert refused.status_code == 401
        response = await client.get(f"/runs/{run_id}/events", headers=auth)
        assert response.headers["access-control-allow-origin"] == "http://app.example"
        assert parse_sse(response.text)[-1]["data"] == {"status": "completed"}
        async with client.stream("GET", "/events", headers=auth) as stream:
            assert stream.headers["access-control-allow-origin"] == "http://app.example"
