"""Structured output that a model wraps in a markdown code fence, with words around it, over
HTTP (the local OpenAI-compatible server): the fenced JSON is the answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.adapters.base import parse_structured
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply


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
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")
    return Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


FENCED = [
    "Here is the JSON you asked for:\n```json\n{BODY}\n```",
    "```JSON\n{BODY}\n```",
    "```json\n{BODY}\n```\nLet me know if you need anything else.",
    "Sure! ```{BODY}```",
]


@pytest.mark.parametrize("reply", FENCED)
def test_json_in_a_markdown_fence_with_words_around_it_is_the_answer(
    srv: OpenAICompatServer, reply: str
) -> None:
    """The fences were stripped only at the start and end of lines, so the words around a
    fenced block made every attempt invalid (five requests, then a failed run)."""
    srv.set_handler(lambda _req: ServerReply.text(reply.replace("{BODY}", '{"total": 3}')))
    try:
        report = _desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    finally:
        srv.set_handler(None)
    assert report.status == "completed", report.errors
    assert report.data == Total(total=3)
    assert len(srv.requests) == 1


@pytest.mark.parametrize("reply", FENCED)
def test_a_fenced_json_value_validates_against_a_type_adapter_schema(
    srv: OpenAICompatServer, reply: str
) -> None:
    srv.set_handler(lambda _req: ServerReply.text(reply.replace("{BODY}", "[1, 2]")))
    try:
        job = Job(input="x", response_schema=TypeAdapter(list[int]))
        report = _desk(srv).run(Worker(name="w"), job)
    finally:
        srv.set_handler(None)
    assert report.status == "completed", report.errors
    assert report.data == [1, 2]
    assert len(srv.requests) == 1


def test_a_json_string_holding_a_fence_is_left_as_it_is() -> None:
    text = '{"code": "```python print(1)```"}'
    assert parse_structured(text, TypeAdapter(dict[str, str])) == {"code": "```python print(1)```"}


def test_a_fenced_block_that_does_not_validate_is_the_error_raised() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="valid integer"):
        parse_structured('Here:\n```json\n{"total": "many"}\n```', Total)
