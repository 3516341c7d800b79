"""A refusal streamed as ``delta.refusal`` pieces is the reply, as a plain call's is.

LiteLLM's stream passes no refusal delta on: with ``stream=True`` a refused call completed
with no answer and no trace of why, while the same refusal unstreamed was the reply's text.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply

REFUSAL = "I can't help with that request."


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


def _desk(server: OpenAICompatServer) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789abcdef")
    return Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())


@pytest.mark.parametrize("stream", [False, True])
def test_a_refusal_is_the_reply_streamed_or_not(server: OpenAICompatServer, stream: bool) -> None:
    server.enqueue(ServerReply.refused(REFUSAL))
    report = _desk(server).run(Worker(name="w"), Job(input="x"), stream=stream)
    assert report.status == "completed", report.errors
    assert report.content == REFUSAL
    tokens = [e.payload["token"] for e in report.events if e.type == EventType.STREAM_TOKEN]
    assert "".join(tokens) == (REFUSAL if stream else "")  # a UI shows it as it comes


def test_a_streamed_reply_without_a_refusal_is_read_as_before(server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("a plain answer"))
    report = _desk(server).run(Worker(name="w"), Job(input="x"), stream=True)
    assert (report.status, report.content) == ("completed", "a plain answer")
