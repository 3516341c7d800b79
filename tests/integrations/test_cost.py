"""Cost and usage: LLM event payloads and the offline price table."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.adapters.cost import calculate_cost, get_model_pricing
from deskwork.adapters.litellm import LiteLLMAdapter, import_litellm
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply

KEY = "sk-test-cost-0123456789abcdef"
USAGE = {"prompt_tokens": 1000, "completion_tokens": 500}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Refuse every connection that leaves this machine; yields the refused addresses."""
    refused: list[Any] = []
    original = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if isinstance(host, str) and (host.startswith("127.") or host in ("localhost", "::1")):
            return original(self, address)
        if self.family == socket.AF_UNIX:
            return original(self, address)
        refused.append(address)
        raise OSError(f"network disabled in this test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield refused


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as running:
        yield running


def _price(model: str) -> tuple[float, float]:
    pricing = get_model_pricing(model)
    assert pricing is not None
    return pricing["input_cost_per_token"], pricing["output_cost_per_token"]


def test_model_pricing_comes_from_the_local_table(offline: list[Any]) -> None:
    pricing = get_model_pricing("openai/gpt-4o-mini")
    assert pricing is not None
    assert pricing["input_cost_per_token"] > 0 and pricing["output_cost_per_token"] > 0
    assert pricing["litellm_provider"] == "openai"
    assert pricing["max_input_tokens"] >= 100_000
    assert get_model_pricing("gpt-4o-mini") == pricing  # prefixed or not
    assert get_model_pricing("openai/no-such-model-xyz") is None
    assert offline == []


def test_calculate_cost_of_real_responses(server: OpenAICompatServer, offline: list[Any]) -> None:
    litellm = import_litellm()
    server.enqueue(ServerReply.text("priced", usage=USAGE), ServerReply.text("free", usage=USAGE))
    messages = [{"role": "user", "content": "hi"}]
    common = {"api_base": server.base_url, "api_key": KEY, "messages": messages}
    priced = litellm.completion(model="openai/gpt-4o-mini", **common)
    unknown = litellm.completion(model="openai/no-such-model-xyz", **common)
    input_price, output_price = _price("openai/gpt-4o-mini")
    expected = 1000 * input_price + 500 * output_price
    assert calculate_cost(priced) == pytest.approx(expected)
    assert calculate_cost(unknown) is None
    assert calculate_cost(None) is None
    assert offline == []


def test_llm_events_carry_tokens_latency_and_cost(server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("Hello!", usage=USAGE))
    store = InMemoryRunStore()
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=KEY)
    desk = Desk(model="openai/gpt-4o-mini", adapter=adapter, run_store=store)
    seen: list[Any] = []
    desk.event_bus.subscribe("llm.completed", seen.append)
    report = desk.run(Worker(name="assistant"), Job(input="Hello"))
    assert report.status == "completed", report.errors
    events = {e.type: e.payload for e in store.get_events(report.run_id)}
    assert events["llm.started"] == {"model": "openai/gpt-4o-mini", "messages_count": 1,
                                     "tools_count": 0}  # fmt: skip
    completed = events["llm.completed"]
    assert completed["model"] == "openai/gpt-4o-mini"
    assert (completed["prompt_tokens"], completed["completion_tokens"]) == (1000, 500)
    assert completed["total_tokens"] == 1500
    assert completed["latency_ms"] > 0
    input_price, output_price = _price("openai/gpt-4o-mini")
    assert completed["cost"] == pytest.approx(1000 * input_price + 500 * output_price)
    assert seen and seen[0].payload == completed  # what subscribers receive


def test_unknown_model_has_no_cost_and_failures_have_no_secrets(
    server: OpenAICompatServer,
) -> None:
    server.enqueue(
        ServerReply.text("ok", usage=USAGE),
        ServerReply.error(500, f"upstream exploded (key {KEY})"),
    )
    store = InMemoryRunStore()
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=KEY)
    desk = Desk(model="openai/no-such-model-xyz", adapter=adapter, run_store=store)
    fine = desk.run(Worker(name="w"), Job(input="one"))
    failed = desk.run(Worker(name="w"), Job(input="two"))
    completed = next(e for e in store.get_events(fine.run_id) if e.type == "llm.completed")
    assert "cost" not in completed.payload  # optional: absent when unknown (the seed)
    assert completed.payload["total_tokens"] == 1500
    assert failed.status == "failed"
    (event,) = [e for e in store.get_events(failed.run_id) if e.type == "llm.failed"]
    assert set(event.payload) == {"model", "latency_ms", "error_type", "error_message"}
    assert event.payload["error_type"] == "InternalServerError"
    assert "upstream exploded" in event.payload["error_message"]
    assert event.payload["latency_ms"] > 0
    assert KEY not in str(store.get_events(failed.run_id)) + failed.model_dump_json()


def test_streamed_calls_are_priced_too(server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("Hello there!", usage=USAGE))
    store = InMemoryRunStore()
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=KEY)
    desk = Desk(model="openai/gpt-4o-mini", adapter=adapter, run_store=store, stream=True)
    report = desk.run(Worker(name="assistant"), Job(input="Hello"))
    completed = next(e for e in store.get_events(report.run_id) if e.type == "llm.completed")
    assert completed.payload["total_tokens"] == 1500
    assert completed.payload["cost"] is not None
