"""LiteLLM's structured pipeline (native JSON schema, then Instructor) keeps the model's last
reply in its StructuredOutputError, so the failed report quotes it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, create_model

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.adapters.base import structured_reply
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply


class Total(BaseModel):
    total: int


@pytest.fixture
def srv() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


def test_the_instructor_failure_quotes_the_last_reply(srv: OpenAICompatServer) -> None:
    srv.set_handler(lambda _req: ServerReply.text("The total is many, I think."))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(
        Worker(name="w"),
        Job(input="x", response_schema=Total),
    )
    assert report.status == "failed"
    assert structured_reply(report.errors[0]) == "The total is many, I think."


def test_the_llm_failed_event_carries_the_reply_however_long_the_error(
    srv: OpenAICompatServer,
) -> None:
    fields: dict[str, Any] = {f"field_number_{i}": (int, ...) for i in range(60)}
    many = create_model("Many", **fields)  # a validation error past 2,000 characters

    srv.set_handler(lambda _req: ServerReply.text("Sorry, I cannot fill that in."))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=many))
    assert report.status == "failed"
    failed = [e for e in report.events if e.type == "llm.failed"]
    assert failed and failed[-1].payload["reply"] == "Sorry, I cannot fill that in."
