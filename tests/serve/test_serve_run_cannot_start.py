"""A run the desk refuses to start (it raises before recording the run) is an error with a
JSON body at once: ``POST /runs`` answered ``200 running`` with the id of a run that never
existed, ``?wait=true`` a bare 500, and AG-UI cut its stream."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from serve_support import make_desk


class Nameless:
    """A runner whose name the desk refuses."""

    runner_type = "custom"
    name = None

    async def arun(self, config: Any, job: Any) -> Any:
        raise AssertionError("never started")


@pytest.mark.parametrize("wait", ["", "?wait=true"])
async def test_post_runs_says_the_run_could_not_start(live_factory: Any, wait: str) -> None:
    live = live_factory(make_desk(), runners={"nameless": Nameless()})
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        body = {"runner": "nameless", "job": {"input": "x"}}
        answer = await client.post(f"/runs{wait}", json=body)
        assert answer.status_code == 409
        assert "the run could not start" in answer.json()["detail"]
        assert (await client.get("/runs")).json()["runs"] == []


async def test_agui_says_the_run_could_not_start(live_factory: Any) -> None:
    live = live_factory(make_desk(), runners={"nameless": Nameless()})
    body = {
        "threadId": "t",
        "runId": "never",
        "messages": [{"id": "m", "role": "user", "content": "x"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        answer = await client.post("/agui/nameless", json=body)
        assert answer.status_code == 409
        assert "the run could not start" in answer.json()["detail"]


@pytest.mark.parametrize("stream", ["none", "sse"])
@pytest.mark.parametrize("message", ["   ", "\x1c\n"])
async def test_a_blank_session_message_is_422(live: Any, stream: str, message: str) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        sid = (await client.post("/sessions", json={"runner": "echo"})).json()["session_id"]
        body = {"message": message, "stream": stream}
        answer = await client.post(f"/sessions/{sid}/messages", json=body)
        assert answer.status_code == 422  # the turn could not start: a 500, a reset stream
        assert "empty or only whitespace" in answer.text
