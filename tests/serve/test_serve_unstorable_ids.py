"""An id in a request body that no store keeps -- one with a NUL or a lone surrogate
(``"\\ud800"``, which JSON can carry as an escape) -- is a 422 before anything starts.

``POST /sessions`` answered 500: the store's 'refused a value' StoreError for a NUL, and for
a lone surrogate FastAPI's own 422, whose body quotes the input back and cannot be encoded
in UTF-8. ``POST /agui/{runner}`` answered 200 and cut its stream short after
``RUN_STARTED`` (the run's task raised the StoreError), or failed writing that first event.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from serve_support import Live

ODD = pytest.mark.parametrize("odd", ["\x00", "\ud800"], ids=["nul", "surrogate"])


async def _post(live: Live, path: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        # json.dumps writes a lone surrogate as its escape, as a client's JSON may carry it
        content = json.dumps(body)
        return await client.post(
            path, content=content, headers={"content-type": "application/json"}
        )


@ODD
async def test_a_session_id_no_store_keeps_is_a_422(live: Live, odd: str) -> None:
    response = await _post(live, "/sessions", {"runner": "echo", "session_id": f"s{odd}1"})
    assert response.status_code == 422, response.text
    assert (await _post(live, "/sessions", {"runner": "echo", "session_id": "s1"})).is_success


@ODD
async def test_an_agui_run_or_thread_id_no_store_keeps_is_a_422(live: Live, odd: str) -> None:
    messages = [{"id": "m1", "role": "user", "content": "hello"}]
    body = {"threadId": "t", "runId": "r", "state": None, "messages": messages,
            "tools": [], "context": [], "forwardedProps": None}  # fmt: skip
    for bad in ({"runId": f"r{odd}1"}, {"threadId": f"t{odd}1"}):
        response = await _post(live, "/agui/echo", {**body, **bad})
        assert response.status_code == 422, response.text
        assert "cannot hold a NUL character or a lone surrogate" in response.text
    assert live.desk.run_store.list_runs() == []  # no run was started
    assert (await _post(live, "/agui/echo", body)).status_code == 200


async def test_a_message_with_a_lone_surrogate_is_a_422(live: Live) -> None:
    """Any body field pydantic refuses for a lone surrogate: FastAPI's 422, not a 500."""
    session = await _post(live, "/sessions", {"runner": "echo", "session_id": "s2"})
    assert session.is_success
    response = await _post(live, "/sessions/s2/messages", {"message": "hi \ud800"})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "message"]
