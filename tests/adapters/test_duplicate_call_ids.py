"""Two tool calls of one reply that share an id (a provider bug) stay two calls."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.adapters import BaseModelAdapter, LiteLLMAdapter, StreamChunk, ToolCallDelta
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import tool

ran: list[tuple[int, int]] = []


@tool(requires_confirmation=True)
def add(a: int, b: int) -> int:
    """Add two integers (after approval)."""
    ran.append((a, b))
    return a + b


def _reply_with_duplicate_ids() -> dict[str, Any]:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": args}}
        for args in ('{"a": 1, "b": 2}', '{"a": 3, "b": 4}')
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    ran.clear()
    with OpenAICompatServer() as srv:
        yield srv


def _approve_all(desk: Desk) -> tuple[Any, list[dict[str, Any]]]:
    report = desk.run(Worker(name="w", tools=[add]), Job(input="add"))
    approved = []
    while report.status == "paused":
        assert report.pending_action is not None
        approved.append(report.pending_action.tool_call.arguments)
        report = desk.resume(report, True)
    return report, approved


def test_the_approved_call_is_the_one_that_runs(server: OpenAICompatServer) -> None:
    """Sharing an id, approving the first call ran the second one, whose result answered
    both; as with distinct ids, the approved call runs and the other one is skipped."""
    server.enqueue(ServerReply.malformed(_reply_with_duplicate_ids()), ServerReply.text("done"))
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report, approved = _approve_all(desk)
    assert report.status == "completed", report.errors
    assert approved == [{"a": 1, "b": 2}]
    assert ran == [(1, 2)]
    sent = server.requests[-1].body["messages"]
    call_ids = [call["id"] for call in sent[-3]["tool_calls"]]
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert call_ids[0] == "c1" and len(set(call_ids)) == 2
    assert results[call_ids[0]] == "3"
    assert "skipped" in results[call_ids[1]]


class _StreamingDuplicates(BaseModelAdapter):
    def __init__(self) -> None:
        self.calls = 0

    async def acomplete(self, **params: Any) -> AsyncIterator[StreamChunk]:
        self.calls += 1
        first = self.calls == 1
        return self._stream(first)

    async def _stream(self, first: bool) -> AsyncIterator[StreamChunk]:
        if not first:
            yield StreamChunk(content="done", finish_reason="stop")
            return
        for index, args in enumerate(('{"a": 1, "b": 2}', '{"a": 3, "b": 4}')):
            delta = ToolCallDelta(index=index, id="c1", name="add", arguments=args)
            yield StreamChunk(tool_calls=[delta])
        yield StreamChunk(finish_reason="tool_calls")


def test_streamed_calls_sharing_an_id_stay_two_calls() -> None:
    ran.clear()
    desk = Desk(
        model="m", adapter=_StreamingDuplicates(), run_store=InMemoryRunStore(), stream=True
    )
    report, approved = _approve_all(desk)
    assert report.status == "completed", report.errors
    assert approved == [{"a": 1, "b": 2}]
    assert ran == [(1, 2)]
    ids = [call.id for call in report.tool_calls]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "3"
