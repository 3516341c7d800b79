"""llm.completed says why a reply ended when it did not end as replies do: a reply cut at
max_tokens, or emptied by a content filter, completed with no trace of why."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply


@pytest.fixture
def srv() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


def _completed(srv: OpenAICompatServer, reply: ServerReply, stream: bool) -> dict[str, object]:
    srv.set_handler(lambda _req: reply)
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x"), stream=stream)
    assert report.status == "completed"
    (event,) = [e for e in report.events if e.type == "llm.completed"]
    return event.payload


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_a_reply_that_ended_early_says_why(
    srv: OpenAICompatServer, reason: str, stream: bool
) -> None:
    payload = _completed(srv, ServerReply.text("The answer is", finish_reason=reason), stream)
    assert payload["finish_reason"] == reason


def test_a_reply_that_ended_as_replies_do_carries_no_reason(srv: OpenAICompatServer) -> None:
    assert "finish_reason" not in _completed(srv, ServerReply.text("Done."), False)
