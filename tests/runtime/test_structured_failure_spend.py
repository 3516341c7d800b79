"""A structured output that fails after all its attempts still counts what they spent: the
run's metrics show the tokens and cost (the money is spent whether the output validated or
not), as the budget that the same code charges sees it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply


class Total(BaseModel):
    total: int


class _Prose(BaseModelAdapter):
    """Answers in prose, never JSON, at 10 tokens and $0.01 a call."""

    def __init__(self) -> None:
        self.calls = 0

    async def acomplete(self, **_: Any) -> ModelResponse:
        self.calls += 1
        usage = {"prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10}
        return ModelResponse(content="Many, I think.", usage=usage, cost=0.01)


def test_every_failed_attempt_is_counted() -> None:
    adapter = _Prose()
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    job = Job(input="x", response_schema=Total, max_cost_usd=5.0)
    report = desk.run(Worker(name="w"), job)
    assert report.status == "failed"
    assert report.metrics["total_tokens"] == 10 * adapter.calls
    assert report.metrics["cost"] == pytest.approx(0.01 * adapter.calls)


@pytest.fixture
def srv() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


def test_litellm_native_and_instructor_attempts_are_all_counted(srv: OpenAICompatServer) -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    srv.set_handler(lambda _req: ServerReply.text("Many, I think.", usage=usage))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "failed"
    assert report.metrics["total_tokens"] == 10 * len(srv.requests)
