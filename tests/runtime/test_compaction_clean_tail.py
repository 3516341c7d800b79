"""What a compaction leaves is a history Anthropic takes: its first message after the system
ones is a user message, and no tool result is parted from its call. The kept tail could
start with an assistant message (a reply, or tool calls), which Anthropic refuses."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.message import Message, ToolCall
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def anthropic_refuses(messages: list[dict[str, Any]]) -> str | None:
    """Why Anthropic would refuse ``messages`` (system messages go apart), else ``None``."""
    chat = [m for m in messages if m["role"] != "system"]
    if not chat or chat[0]["role"] != "user":
        return f"the first message is {chat[0]['role'] if chat else 'missing'}, not user"
    awaited: set[str] = set()
    for message in chat:
        if message["role"] == "tool":
            if message["tool_call_id"] not in awaited:
                return f"result {message['tool_call_id']} follows no call of it"
            awaited.discard(message["tool_call_id"])
        elif awaited:
            return f"calls {sorted(awaited)} have no results"
        else:
            awaited = {call["id"] for call in message.get("tool_calls") or ()}
    return f"calls {sorted(awaited)} have no results" if awaited else None


def _history(pairs: int) -> list[Message]:
    """``pairs`` exchanges of a user message and a reply, every other one through a tool."""
    history: list[Message] = []
    for i in range(pairs):
        history.append(Message(role="user", content=f"u{i}"))
        if i % 2:
            call = ToolCall(id=f"h{i}", name="lookup", arguments={"q": str(i)})
            history.append(Message(role="assistant", content=None, tool_calls=[call]))
            history.append(Message(role="tool", content=f"found {i}", tool_call_id=f"h{i}"))
        history.append(Message(role="assistant", content=f"a{i}"))
    return history


def _policy() -> Any:
    """Three tool calls, then an answer; a summary when asked for one."""
    turns = iter([call_tool("lookup", q=str(i)) for i in range(3)])

    def turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
        return reply("SUMMARY") if tools is None else next(turns, reply("done"))

    return turn


@pytest.mark.parametrize("limit", [5, 6, 7, 8])
@pytest.mark.parametrize("pairs", [3, 4, 5])
def test_every_request_after_a_compaction_is_one_anthropic_takes(limit: int, pairs: int) -> None:
    adapter = ScriptedAdapter(default=_policy())
    desk = Desk(
        model="scripted/m",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        max_context_messages=limit,
    )
    worker = Worker(name="w", instructions="Be brief.", tools=[lookup])
    report = desk.run(worker, Job(input="go", initial_messages=_history(pairs)))
    assert report.status == "completed", report.errors
    sent = [call["messages"] for call in adapter.calls if call["tools"] is not None]
    assert any("SUMMARY" in str(m["content"]) for messages in sent for m in messages)
    for messages in sent:
        assert len(messages) <= limit
        assert anthropic_refuses(messages) is None, [m["role"] for m in messages]
