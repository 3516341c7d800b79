"""Streamed tool calls whose name the provider sends oddly, over HTTP (the local
OpenAI-compatible server, a raw Server-Sent Events body): split in pieces, repeated on every
delta, or growing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import tool


@tool()
def add_numbers(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


def _delta(name: str | None, arguments: str, first: bool) -> dict[str, Any]:
    call: dict[str, Any] = {"index": 0, "function": {"arguments": arguments}}
    if name is not None:
        call["function"]["name"] = name
    if first:
        call.update(id="call_x", type="function")
    choice = {"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [choice]}  # fmt: skip


def _stream(names: list[str | None]) -> bytes:
    pieces = ['{"a": 2,', ' "b": ', "3}"]
    pairs = enumerate(zip(names, pieces, strict=True))
    events = [_delta(name, args, i == 0) for i, (name, args) in pairs]
    finish = {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    events.append({**events[0], "choices": [finish]})
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


@pytest.mark.parametrize(
    "names",
    [
        ["add_numbers", None, None],  # OpenAI
        ["add_", "numbers", None],  # in pieces: the call was made to 'add_', an unknown tool
        ["add_numbers", "add_numbers", "add_numbers"],  # repeated on every delta
        ["add", "add_num", "add_numbers"],  # growing
    ],
    ids=["whole", "pieces", "repeated", "growing"],
)
def test_a_streamed_call_runs_the_tool_whatever_way_its_name_came(
    server: OpenAICompatServer, names: list[str | None]
) -> None:
    server.clear()
    server.enqueue(ServerReply.malformed(_stream(names)), ServerReply.text("5"))
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[add_numbers]), Job(input="add"), stream=True)
    assert report.status == "completed", report.errors
    [call] = report.tool_calls
    assert (call.name, call.arguments, call.error) == ("add_numbers", {"a": 2, "b": 3}, None)
    assert call.result is not None and call.result.content == "5"
