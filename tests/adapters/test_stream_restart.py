"""A stream cut midway is asked for again under ``num_retries``, as a failed call is.

It failed the model call at once, though a plain call failing the same way was retried.
Now: when nothing of the reply has come yet, the stream is asked for again as any failed
call; when part of it went out already, a desk run asks again too and emits
``llm.stream_restarted`` (a UI drops the tokens before it), while a caller that cannot take
back what it received (no ``on_stream_restart``) gets the error, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters import LiteLLMAdapter, RetryPolicy
from deskwork.adapters import _seam as seam
from deskwork.adapters.base import BaseModelAdapter, ModelResponse, StreamChunk
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply

NO_WAIT = RetryPolicy(initial_interval=0.0, jitter=False)
ANSWER = "the whole answer has many words in it"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> OpenAICompatServer:
    server.clear()
    return server


def _http_desk(server: OpenAICompatServer, **kwargs: Any) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789abcdef")
    return Desk(
        model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore(),
        stream=True, retry_policy=NO_WAIT, **kwargs,
    )  # fmt: skip


def test_a_stream_cut_after_its_first_words_is_asked_for_again(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply(content="an answer cut short here", stream_cut=3), ServerReply.text(ANSWER)
    )
    report = _http_desk(srv, num_retries=1).run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == ANSWER
    assert len(srv.requests) == 2
    types = [e.type for e in report.events]
    restarted = types.index(EventType.LLM_STREAM_RESTARTED)
    assert EventType.STREAM_TOKEN in types[:restarted]  # the cut stream's words went out
    assert types[restarted - 1] == EventType.LLM_RETRY
    after = report.events[restarted + 1 :]
    tokens = [e.payload["token"] for e in after if e.type == EventType.STREAM_TOKEN]
    assert "".join(tokens) == ANSWER  # a UI that drops what came before shows the answer
    payload = report.events[restarted].payload
    assert payload["error_type"] == "ProviderReplyError"
    assert [e.type for e in report.events].count(EventType.LLM_COMPLETED) == 1


def test_the_restarts_share_the_desks_retries(srv: OpenAICompatServer) -> None:
    cut = ServerReply(content=ANSWER, stream_cut=3)
    srv.enqueue(ServerReply.error(503, "busy"), cut, ServerReply.text("never asked for"))
    report = _http_desk(srv, num_retries=1).run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "ProviderReplyError" in report.errors[0]
    assert len(srv.requests) == 2  # 1 + num_retries requests, however they failed


class CutStreams(BaseModelAdapter):
    """Streams: each script a list of chunks, an exception among them raised there."""

    def __init__(self, *scripts: list[StreamChunk | Exception]) -> None:
        self.scripts = list(scripts)
        self.calls = 0

    async def acomplete(self, **params: Any) -> Any:  # type: ignore[override]
        self.calls += 1
        return self._stream(self.scripts.pop(0))

    async def _stream(self, script: list[StreamChunk | Exception]) -> AsyncIterator[StreamChunk]:
        for item in script:
            if isinstance(item, Exception):
                raise item
            yield item


def _params() -> dict[str, Any]:
    keys = ("tools", "tool_choice", "temperature", "max_tokens", "stream_options")
    return {"model": "m", "messages": [], "stream": True, **dict.fromkeys(keys)}


async def _text(result: ModelResponse | AsyncIterator[StreamChunk]) -> str:
    assert not isinstance(result, ModelResponse)
    return "".join([chunk.content or "" async for chunk in result])


async def test_a_stream_cut_before_any_of_the_reply_is_asked_for_again_for_any_caller() -> None:
    """Only a role chunk came: nothing to take back, so even a caller that cannot (a graph's
    model, which hands each chunk on) gets the stream asked for again."""
    adapter = CutStreams(
        [StreamChunk(), ConnectionResetError("reset by peer")], [StreamChunk(content="hello")]
    )
    retries: list[int] = []
    calls = seam.CallPolicy(1, NO_WAIT, on_retry=lambda n, _w, _e: retries.append(n))
    result = await seam.acomplete(adapter, calls=calls, **_params())
    assert await _text(result) == "hello"
    assert adapter.calls == 2 and retries == [1]


async def test_a_caller_that_cannot_take_text_back_gets_the_error() -> None:
    adapter = CutStreams(
        [StreamChunk(content="hel"), ConnectionResetError("reset by peer")],
        [StreamChunk(content="hello")],
    )
    calls = seam.CallPolicy(1, NO_WAIT)
    result = await seam.acomplete(adapter, calls=calls, **_params())
    with pytest.raises(ConnectionResetError):
        await _text(result)
    assert adapter.calls == 1


async def test_a_caller_that_takes_text_back_is_told_before_the_new_stream() -> None:
    adapter = CutStreams(
        [StreamChunk(content="hel"), ConnectionResetError("reset by peer")],
        [StreamChunk(content="hello")],
    )
    seen: list[str] = []
    calls = seam.CallPolicy(
        1, NO_WAIT, on_stream_restart=lambda error: seen.append(f"restart: {error}")
    )
    result = await seam.acomplete(adapter, calls=calls, **_params())
    assert not isinstance(result, ModelResponse)
    async for chunk in result:
        seen.append(chunk.content or "")
    assert seen == ["hel", "restart: reset by peer", "hello"]


async def test_an_error_that_is_not_transient_is_not_asked_again() -> None:
    adapter = CutStreams([StreamChunk(), ValueError("bad chunk")], [StreamChunk(content="x")])
    result = await seam.acomplete(adapter, calls=seam.CallPolicy(3, NO_WAIT), **_params())
    with pytest.raises(ValueError, match="bad chunk"):
        await _text(result)
    assert adapter.calls == 1


def test_a_run_whose_cut_stream_emitted_no_token_restarts_without_the_event() -> None:
    adapter = CutStreams(
        [StreamChunk(), ConnectionResetError("reset")], [StreamChunk(content="fine")]
    )
    desk = Desk(
        model="m", adapter=adapter, run_store=InMemoryRunStore(), stream=True,
        num_retries=1, retry_policy=NO_WAIT,
    )  # fmt: skip
    report = desk.run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == "fine"
    types = [e.type for e in report.events]
    assert types.count(EventType.LLM_RETRY) == 1
    assert EventType.LLM_STREAM_RESTARTED not in types
