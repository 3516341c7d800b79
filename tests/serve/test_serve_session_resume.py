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


async def test_a_session_turn_resumed_through_agui_is_saved_to_the_session(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        sid = (await client.post("/sessions", json={"runner": "clerk"})).json()["session_id"]
        paused = (
            await client.post(
                f"/sessions/{sid}/messages", json={"message": "beans?", "stream": "none"}
            )
        ).json()
        action_id = paused["pending_action"]["action_id"]
        body = {
            "threadId": "t",
            "runId": "next",
            "messages": [{"id": "m", "role": "user", "content": "beans?"}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
            "resume": [
                {
                    "interruptId": f"{paused['run_id']}:{action_id}",
                    "status": "resolved",
                    "payload": True,
                }
            ],
        }
        async with client.stream("POST", "/agui/clerk", json=body) as answer:
            assert answer.status_code == 200
            async for _ in answer.aiter_bytes():
                pass
        messages = (await client.get(f"/sessions/{sid}/messages")).json()["messages"]
        assert [(m["role"], m["content"]) for m in messages][-2:] == [
            ("tool", "ordered 38 x beans"),
            ("assistant", "done: ordered 38 x beans"),
        ]


async def test_a_client_run_cannot_claim_to_be_a_session_turn(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        job = {"input": "beans?", "metadata": {"deskwork_session": "someone-else"}}
        refused = await client.post("/runs", json={"runner": "clerk", "job": job})
        assert refused.status_code == 422
        assert "deskwork_session" in refused.text
