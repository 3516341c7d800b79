"""Streamed tool calls are put together call by call, whatever the provider numbers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from deskwork import Desk, Job, Worker
from deskwork.adapters import BaseModelAdapter, StreamChunk, ToolCallDelta
from deskwork.store import InMemoryRunStore
from deskwork.tools import tool


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class _WholeCallsWithoutIndex(BaseModelAdapter):
    """Each call complete in one delta, with its own id and no index (the adapter reads a
    missing index as 0), the way some OpenAI-compatible servers stream."""

    def __init__(self) -> None:
        self.calls = 0

    async def acomplete(self, **params: Any) -> AsyncIterator[StreamChunk]:
        self.calls += 1
        return self._stream(first=self.calls == 1)

    async def _stream(self, first: bool) -> AsyncIterator[StreamChunk]:
        if not first:
            yield StreamChunk(content="done", finish_reason="stop")
            return
        for call_id, args in (("ca", '{"a": 1, "b": 2}'), ("cb", '{"a": 3, "b": 4}')):
            yield StreamChunk(tool_calls=[ToolCallDelta(0, id=call_id, name="add", arguments=args)])
        yield StreamChunk(finish_reason="tool_calls")


def test_calls_streamed_without_an_index_stay_separate_calls() -> None:
    """They were merged into one call whose arguments were two JSON objects (malformed), and
    the second call was lost."""
    desk = Desk(
        model="m", adapter=_WholeCallsWithoutIndex(), run_store=InMemoryRunStore(), stream=True
    )
    report = desk.run(Worker(name="w", tools=[add]), Job(input="add"))
    assert report.status == "completed", report.errors
    calls = [(c.id, c.arguments, c.result.content if c.result else None) for c in report.tool_calls]
    assert calls == [("ca", {"a": 1, "b": 2}, "3"), ("cb", {"a": 3, "b": 4}, "7")]
