"""Adapter styles users already have: sync chunk iterators, sync structured_complete, and
streams that fail before their first chunk."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import BaseModel

from deskwork import Desk, Job, Worker
from deskwork.adapters import BaseModelAdapter, ModelResponse, StreamChunk, ToolCallDelta
from deskwork.exceptions import StreamingUnsupportedError
from deskwork.store import InMemoryRunStore
from deskwork.tools import tool


def _desk(adapter: BaseModelAdapter, **kwargs: Any) -> Desk:
    return Desk(model="custom/m", adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


class IteratorAdapter(BaseModelAdapter):
    """Streams with a plain generator (as a sync client would)."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def _chunks(self, words: list[str]) -> Iterator[StreamChunk]:
        for word in words:
            self.threads.append(threading.current_thread().name)
            yield StreamChunk(content=word)
        yield StreamChunk(finish_reason="stop", usage={"total_tokens": 3})

    async def acomplete(self, **kwargs: Any) -> Any:
        if kwargs["stream"]:
            return self._chunks(["Hello", " from", " a generator"])
        return ModelResponse(content="plain")


def test_a_plain_iterator_of_chunks_streams() -> None:
    adapter = IteratorAdapter()
    report = _desk(adapter, stream=True).run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "Hello from a generator")
    tokens = [e.payload["token"] for e in report.events if e.type == "stream.token"]
    assert tokens == ["Hello", " from", " a generator"]
    # a lazy sync iterator may block on the network: it is advanced off the loop's thread
    assert threading.current_thread().name not in adapter.threads


def test_a_list_of_chunks_with_a_tool_call_streams() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    class ListAdapter(BaseModelAdapter):
        def __init__(self) -> None:
            self.turn = 0

        async def acomplete(self, **kwargs: Any) -> Any:
            self.turn += 1
            if self.turn == 1:
                return [
                    StreamChunk(tool_calls=[ToolCallDelta(0, "c1", "add", '{"a": 2,')]),
                    StreamChunk(tool_calls=[ToolCallDelta(0, arguments=' "b": 3}')]),
                ]
            return [StreamChunk(content="5")]

    report = _desk(ListAdapter(), stream=True).run(Worker(name="w", tools=[add]), "2+3?")
    assert (report.status, report.content) == ("completed", "5")
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "5"


class Answer(BaseModel):
    value: int


class SyncStructuredAdapter(BaseModelAdapter):
    """Implements only the sync structured hook (the core seed's older adapter style)."""

    def __init__(self) -> None:
        self.structured_calls = 0

    async def acomplete(self, **kwargs: Any) -> Any:
        return ModelResponse(content="not json")  # the generic pipeline would fail on this

    def structured_complete(self, **kwargs: Any) -> ModelResponse:
        self.structured_calls += 1
        return ModelResponse(content='{"value": 7}', parsed=Answer(value=7))


def test_an_adapter_with_only_sync_structured_complete_is_used() -> None:
    adapter = SyncStructuredAdapter()
    report = _desk(adapter).run(Worker(name="w"), Job(input="seven", response_schema=Answer))
    assert report.status == "completed", report.errors
    assert report.data == Answer(value=7)
    assert adapter.structured_calls == 1


class NoStreamAdapter(BaseModelAdapter):
    """Its streaming call fails before the first chunk; plain calls work."""

    def __init__(self, *, fail_in_iterator: bool = False) -> None:
        self.calls: list[bool] = []
        self.fail_in_iterator = fail_in_iterator

    async def acomplete(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs["stream"])
        if not kwargs["stream"]:
            return ModelResponse(content="plain answer")
        if not self.fail_in_iterator:
            raise StreamingUnsupportedError("this provider cannot stream")

        async def broken() -> AsyncIterator[StreamChunk]:
            raise StreamingUnsupportedError("stream closed before the first chunk")
            yield StreamChunk()  # pragma: no cover - makes this an async generator

        return broken()


def test_a_stream_that_fails_at_the_call_falls_back_once_to_a_plain_call() -> None:
    adapter = NoStreamAdapter()
    report = _desk(adapter, stream=True).run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "plain answer")
    assert adapter.calls == [True, False]
    (fallback,) = [e for e in report.events if e.type == "llm.stream_fallback"]
    assert fallback.payload["error_type"] == "StreamingUnsupportedError"


def test_a_stream_that_fails_before_its_first_chunk_falls_back() -> None:
    adapter = NoStreamAdapter(fail_in_iterator=True)
    report = _desk(adapter, stream=True).run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "plain answer")
    assert adapter.calls == [True, False]


def test_the_fallback_happens_once() -> None:
    class AlwaysFails(BaseModelAdapter):
        def __init__(self) -> None:
            self.calls: list[bool] = []

        async def acomplete(self, **kwargs: Any) -> Any:
            self.calls.append(kwargs["stream"])
            raise RuntimeError("down")

    adapter = AlwaysFails()
    report = _desk(adapter, stream=True).run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert adapter.calls == [True, False]


def test_a_stream_failing_after_its_first_chunk_is_not_replayed() -> None:
    class DiesMidway(BaseModelAdapter):
        def __init__(self) -> None:
            self.calls = 0

        async def acomplete(self, **kwargs: Any) -> Any:
            self.calls += 1

            async def chunks() -> AsyncIterator[StreamChunk]:
                yield StreamChunk(content="partial")
                raise ConnectionResetError("peer went away")

            return chunks()

    adapter = DiesMidway()
    report = _desk(adapter, stream=True).run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert adapter.calls == 1
