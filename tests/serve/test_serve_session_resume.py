"""A session turn that paused, resumed over HTTP by its run id: the session's history gets the
rest of the turn, as ``session.resume`` saves it."""

from __future__ import annotations

import httpx
from serve_support import Live


async def test_a_session_turn_resumed_by_run_id_is_saved_to_the_session(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        sid = (await client.post("/sessions", json={"runner": "clerk"})).json()["session_id"]
        paused = (
            await client.post(
                f"/sessions/{sid}/messages", json={"message": "beans?", "stream": "none"}
            )
        ).json()
        assert paused["status"] == "paused"
        resumed = await client.post(
            f"/runs/{paused['run_id']}/resume", json={"decision": True}, params={"wait": "true"}
        )
        assert resumed.json()["status"] == "completed"
        messages = (await client.get(f"/sessions/{sid}/messages")).json()["messages"]
        assert [(m["role"], m["content"]) for m in messages][-2:] == [
            ("tool", "ordered 38 x beans"),
            ("assistant", "done: ordered 38 x beans"),
        ]
        await client.post(f"/sessions/{sid}/messages", json={"message": "more", "stream": "none"})
        messages = (await client.get(f"/sessions/{sid}/messages")).json()["messages"]
        assert [m["content"] for m in messages if m["role"] == "user"] == ["beans?", "more"]


async def test_a_plain_run_resumed_by_run_id_touches_no_session(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        paused = (
            await client.post(
                "/runs",
                json={"runner": "clerk", "job": {"input": "beans?"}},
                params={"wait": "true"},
            )
        ).json()
        assert paused["status"] == "paused"
        resumed = await client.post(
            f"/runs/{paused['run_id']}/resume", json={"decision": True}, params={"wait": "true"}
        )
        assert resumed.json()["status"] == "completed"
