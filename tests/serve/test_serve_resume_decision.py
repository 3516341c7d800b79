"""A confirmation resumed over HTTP with an answer of the wrong shape (an array, a number, an
object without ``"approved"``) is refused with 422 and the run stays paused: the run read any
such answer as an approval, and the pause was gone. ``{"approved": false}`` declines."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from serve_support import Live


async def _paused(client: httpx.AsyncClient) -> str:
    report = (
        await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
    ).json()
    assert report["status"] == "paused" and report["pending_action"]["type"] == "confirmation"
    run_id: str = report["run_id"]
    return run_id


def _stays_paused(live: Live, run_id: str) -> None:
    record = live.desk.run_store.get_run(run_id)
    assert record is not None and record.status == "paused"
    assert "run.resumed" not in [e.type for e in live.desk.run_store.get_events(run_id)]


@pytest.mark.parametrize("decision", [{"ok": False}, [False], 1])
async def test_a_confirmation_answered_with_another_shape_is_422(live: Live, decision: Any) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        run_id = await _paused(client)
        refused = await client.post(f"/runs/{run_id}/resume", json={"decision": decision})
        assert refused.status_code == 422 and "'approved' key" in refused.json()["detail"]
        _stays_paused(live, run_id)
        declined = await client.post(f"/runs/{run_id}/resume?wait=true", json={"decision": "no"})
        assert declined.json()["content"] == "done: Error: Tool execution declined"


async def test_a_confirmation_answered_approved_false_declines(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        run_id = await _paused(client)
        decision = {"approved": False}
        declined = await client.post(
            f"/runs/{run_id}/resume?wait=true", json={"decision": decision}
        )
        assert declined.json()["content"] == "done: Error: Tool execution declined"


async def test_an_agui_resume_with_an_object_payload_is_422(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        run_id = await _paused(client)
        action_id = (await client.get(f"/runs/{run_id}")).json()["pending_action"]["action_id"]
        body = {
            "threadId": "t",
            "runId": "next",
            "messages": [{"id": "m", "role": "user", "content": "go"}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
            "resume": [
                {
                    "interruptId": f"{run_id}:{action_id}",
                    "status": "resolved",
                    "payload": {"decision": False},
                }
            ],
        }
        refused = await client.post("/agui/clerk", json=body)
        assert refused.status_code == 422
        _stays_paused(live, run_id)
