"""LiteLLMAdapter's request timeout: 600 s unless told otherwise (LiteLLM's own is 6000 s, so
a stalled provider held a run for 100 minutes), over real HTTP to the local server."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters.litellm import LiteLLMAdapter, import_litellm
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply

API_KEY = "sk-test-secret-0123456789"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> OpenAICompatServer:
    server.clear()
    return server


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every ``litellm.acompletion`` call (which still goes out)."""
    litellm = import_litellm()
    real, calls = litellm.acompletion, []

    async def acompletion(**params: Any) -> Any:
        calls.append(params)
        return await real(**params)

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    return calls


def _run(server: OpenAICompatServer, **options: Any) -> Any:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=API_KEY, **options)
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    try:
        return desk.run(Worker(name="w", instructions="Be brief."), Job(input="hi"))
    finally:
        desk.close()


@pytest.mark.parametrize(
    ("options", "timeout"),
    [
        ({}, 600),  # the OpenAI SDK's default
        ({"timeout": 30}, 30),
        ({"extra_params": {"timeout": 45}}, 45),
        ({"timeout": None}, None),  # LiteLLM's own
        ({"timeout": httpx.Timeout(30, connect=5)}, httpx.Timeout(30, connect=5)),
    ],
    ids=["default", "given", "extra-params", "none", "httpx"],
)
def test_each_model_request_carries_the_adapter_timeout(
    srv: OpenAICompatServer, sent: list[dict[str, Any]], options: Any, timeout: Any
) -> None:
    srv.enqueue(ServerReply.text("hello"))
    report = _run(srv, **options)
    assert report.status == "completed", report.errors
    [params] = sent
    assert params.get("timeout") == timeout


def test_a_provider_slower_than_the_timeout_fails_the_call(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("too late", delay=2))
    report = _run(srv, timeout=0.3)
    assert report.status == "failed"
    [failed] = [e.payload for e in report.events if e.type == EventType.LLM_FAILED]
    assert "Timeout" in failed["error_type"]
    assert failed["latency_ms"] < 1900  # it did not wait for the answer


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, "30", True])
def test_a_timeout_that_is_not_seconds_is_refused_when_made(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="timeout"):
        LiteLLMAdapter(timeout=bad)
