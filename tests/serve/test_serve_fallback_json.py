"""An answer holding a lone surrogate (written by the fallback encoder) is strict JSON too:
NaN and the infinities as ``null``, as the normal path writes them, where the fallback wrote
them bare (``NaN``, ``Infinity``: no JSON reader but Python's accepts them)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from deskwork import Desk, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def _strict(body: bytes) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(body, parse_constant=refuse)


@pytest.mark.parametrize("text", ["fin\ud800al", "plain"], ids=["fallback", "normal"])
async def test_a_422_quoting_non_finite_numbers_is_strict_json(
    live_factory: Any, text: str
) -> None:
    desk = Desk(
        model="scripted/test", adapter=ScriptedAdapter([reply("x")]), run_store=InMemoryRunStore()
    )
    desk.register(Worker(name="echo", instructions="Echo."))
    served = live_factory(desk)
    unknown = {"text": text, "ratio": float("nan"), "top": [float("inf"), -float("inf")]}
    body = json.dumps({"runner": "echo", "job": {"input": "hi", "unknown": unknown}})
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        response = await client.post(
            "/runs", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 422, response.text
    [error] = _strict(response.content)["detail"]
    assert error["input"] == {"text": text, "ratio": None, "top": [None, None]}
