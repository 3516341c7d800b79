"""What a production user of LiteLLMAdapter meets over HTTP (the local OpenAI-compatible
server): a key echoed in a mid-stream error, a provider error during the Instructor
fallback."""

from __future__ import annotations

import json
import logging
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply

PLAIN_KEY = "0123456789abcdef0123456789abcdef"  # an Azure-style key: no pattern finds it


class Total(BaseModel):
    total: int


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> OpenAICompatServer:
    server.clear()
    return server


def _desk(server: OpenAICompatServer, **kwargs: Any) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=PLAIN_KEY)
    return Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


def _sse(*events: dict[str, Any]) -> bytes:
    """A streamed body with no ``[DONE]``: what a provider sends before it gives up."""
    return b"".join(f"data: {json.dumps(event)}\n\n".encode() for event in events)


def _chunk(content: str) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"role": "assistant", "content": content}}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{**choice, "finish_reason": None}]}  # fmt: skip


def test_a_key_echoed_in_a_mid_stream_error_is_hidden_in_the_error_it_raises(
    srv: OpenAICompatServer,
) -> None:
    """LiteLLM raises MidStreamFallbackError, whose text ends with its original exception's:
    that one kept the key, so the report, the llm.failed event and the store showed it."""
    failure = {"error": {"message": f"key {PLAIN_KEY} was revoked", "code": 401}}
    srv.enqueue(ServerReply.malformed(_sse(_chunk("Hel"), failure)))
    desk = _desk(srv, stream=True)
    report = desk.run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "was revoked" in report.errors[0]
    [failed] = [e for e in report.events if e.type == EventType.LLM_FAILED]
    assert failed.payload["error_type"] == "MidStreamFallbackError"
    assert PLAIN_KEY not in report.model_dump_json()
    assert PLAIN_KEY not in repr(desk.run_store.get_events(report.run_id))


async def test_a_mid_stream_error_keeps_no_key_in_what_a_durable_desk_pickles(
    srv: OpenAICompatServer,
) -> None:
    failure = {"error": {"message": f"key {PLAIN_KEY} was revoked", "code": 401}}
    srv.enqueue(ServerReply.malformed(_sse(_chunk("Hel"), failure)))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=PLAIN_KEY)
    stream = await adapter.acomplete(
        model="openai/test-model", messages=[{"role": "user", "content": "x"}], tools=None,
        tool_choice=None, temperature=None, max_tokens=None, stream=True, stream_options=None,
    )  # fmt: skip
    assert not isinstance(stream, BaseModel)
    with pytest.raises(Exception) as raised:
        async for _ in stream:
            pass
    await adapter.aclose()
    assert PLAIN_KEY not in str(raised.value)
    assert PLAIN_KEY.encode() not in pickle.dumps(raised.value)


def test_a_transient_error_in_the_instructor_fallback_is_retried_under_num_retries(
    srv: OpenAICompatServer,
) -> None:
    """Instructor wraps the provider's error in its InstructorRetryException: a 503 of the
    fallback call failed the run as invalid structured output, never retried."""
    busy = ServerReply.error(503, "overloaded", headers={"retry-after-ms": "1"})
    srv.enqueue(ServerReply.text("not json"), busy, ServerReply.json({"total": 4}))
    report = _desk(srv, num_retries=2).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "completed", report.errors
    assert report.data == Total(total=4)
    retried = [e for e in report.events if e.type == EventType.LLM_RETRY]
    assert [e.payload["error_type"] for e in retried] == ["ServiceUnavailableError"]


REFUSED = ServerReply.error(401, "invalid api key", type="invalid_request_error")


def test_a_refused_key_in_the_instructor_fallback_fails_as_the_provider_said(
    srv: OpenAICompatServer,
) -> None:
    srv.enqueue(ServerReply.text("not json"), REFUSED)
    report = _desk(srv, num_retries=2).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "failed"
    assert report.errors[0].startswith("model call failed: BadRequestError")
    assert "invalid api key" in report.errors[0]
    assert len(srv.requests) == 2  # not retried


@pytest.mark.parametrize(
    "refused",
    [
        REFUSED,
        ServerReply.error(
            404, "The model 'test-model' does not exist", type="invalid_request_error"
        ),
    ],
    ids=["401", "404"],
)
def test_a_structured_call_refused_for_its_key_or_model_is_not_sent_again_to_instructor(
    srv: OpenAICompatServer, refused: ServerReply
) -> None:
    """LiteLLM names an OpenAI-style 401 a BadRequestError (status 401): the refused native
    call was made again through Instructor, as was one for an unknown model."""
    srv.enqueue(refused, refused)
    report = _desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "failed"
    assert refused.error_body is not None
    assert refused.error_body["message"] in report.errors[0]
    assert "structured output failed" not in report.errors[0]
    assert len(srv.requests) == 1


def test_instructor_logs_no_key_a_provider_echoed(
    srv: OpenAICompatServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Instructor logs each failed call's error at ERROR level, the echoed key in it."""
    srv.enqueue(ServerReply.text("not json"), ServerReply.error(400, f"bad key {PLAIN_KEY}"))
    with caplog.at_level(logging.DEBUG):
        report = _desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "failed"
    assert any("bad key" in r.getMessage() for r in caplog.records if r.name.startswith("instr"))
    assert PLAIN_KEY not in caplog.text


def test_an_instructor_failure_reads_as_the_last_validation_error(srv: OpenAICompatServer) -> None:
    """It was Instructor's dump of every attempt (each reply's whole ModelResponse repr):
    4,600 characters for four replies, of which llm.failed kept the first 2,000."""
    srv.set_handler(lambda _req: ServerReply.text("The total is many."))
    try:
        report = _desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    finally:
        srv.set_handler(None)
    assert report.status == "failed"
    error = report.errors[0]
    assert error.startswith("structured output failed: 1 validation error for Total")
    assert "ModelResponse(" not in error and len(error) < 1000
    assert error.endswith("the model's last reply: The total is many.")


USAGE = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}


def test_a_structured_fallback_counts_the_tokens_and_cost_of_every_request(
    srv: OpenAICompatServer,
) -> None:
    """Three requests (the native attempt, two of Instructor's) were counted as two for
    tokens (the native attempt's were lost) and priced as one (LiteLLM prices the last
    completion Instructor hands back): the report under-stated the bill by two thirds."""
    srv.enqueue(
        ServerReply.text("nope", usage=USAGE),
        ServerReply.text("still nope", usage=USAGE),
        ServerReply.json({"total": 2}, usage=USAGE),
    )
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=PLAIN_KEY)
    desk = Desk(model="openai/gpt-4o-mini", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "completed", report.errors
    assert len(srv.requests) == 3
    assert report.metrics["total_tokens"] == 3 * 1100
    srv.enqueue(ServerReply.text("x", usage=USAGE))
    one = adapter.complete(
        model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "x"}], tools=None,
        tool_choice=None, temperature=None, max_tokens=None, stream=False, stream_options=None,
    )  # fmt: skip
    assert one.cost
    assert report.metrics["cost"] == pytest.approx(3 * one.cost)
