"""Messages sent to one session at once over HTTP: each turn follows the one before it, so
no turn is lost from the session's history."""

from __future__ import annotations

import asyncio

import httpx
from serve_support import Live


async def _history(client: httpx.AsyncClient, sid: str) -> list[str]:
    messages = (await client.get(f"/sessions/{sid}/messages")).json()["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_two_messages_at_once_both_stay_in_the_history(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        sid = (await client.post("/sessions", json={"runner": "sleeper"})).json()["session_id"]
        answers = await asyncio.gather(
            *(
                client.post(f"/sessions/{sid}/messages", json={"message": m, "stream": "none"})
                for m in ("0.3", "0.2")
            )
        )
        assert [a.json()["status"] for a in answers] == ["completed", "completed"]
        assert sorted(await _history(client, sid)) == ["0.2", "0.3"]


async def test_a_streamed_turn_left_by_its_client_still_goes_first(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        sid = (await client.post("/sessions", json={"runner": "sleeper"})).json()["session_id"]
        path = f"/sessions/{sid}/messages"
        async with client.stream("POST", path, json={"message": "0.5"}) as first:
            async for _ in first.aiter_bytes():
                break  # the turn has started; the client goes away
        second = await client.post(path, json={"message": "0.1", "stream": "none"})
        assert second.json()["status"] == "completed"
        assert await _history(client, sid) == ["0.5", "0.1"]
