"""A provider that streams tool calls without ids: each call gets its own id, so a session
pairs every call with its own result (``call_0`` came back every reply, and a paused turn's
open call was taken as answered by a later turn's result)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from deskwork import Desk, Worker
from deskwork.adapters import StreamChunk
from deskwork.store import InMemoryRunStore, InMemorySessionStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool


@tool(requires_confirmation=True)
def send(to: str) -> str:
    """Send a mail (after approval)."""
    return f"sent to {to}"


@tool
def look(q: str) -> str:
    """Look something up."""
    return f"found {q}"


class _NoIds(ScriptedAdapter):
    """A scripted model whose streamed tool calls carry no ids (some OpenAI-compatible
    servers)."""

    async def acomplete(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().acomplete(*args, **kwargs)
        return _without_ids(result) if kwargs.get("stream") else result


async def _without_ids(chunks: AsyncIterator[StreamChunk]) -> AsyncIterator[StreamChunk]:
    async for chunk in chunks:
        yield replace(chunk, tool_calls=[replace(d, id=None) for d in chunk.tool_calls])


def _policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    last = messages[-1]
    if last["role"] == "tool":
        return reply("done")
    return call_tool("send", to="ann") if last["content"] == "mail" else call_tool("look", q="x")


def _pairs_are_sound(messages: list[dict[str, Any]]) -> bool:
    """Every assistant tool call is answered right after it, every result follows its call
    (what OpenAI and Anthropic require of a request)."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_ids:
                return False
            open_ids.discard(message["tool_call_id"])
            continue
        if open_ids:
            return False
        open_ids = {call["id"] for call in message.get("tool_calls") or ()}
    return not open_ids


def test_a_later_turn_does_not_take_a_paused_call_as_answered() -> None:
    adapter = _NoIds(default=_policy)
    desk = Desk(
        model="scripted",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        session_store=InMemorySessionStore(),
    )
    session = desk.session(Worker(name="w", tools=[send, look]), "s1")
    assert session is not None
    paused = session.run("mail", stream=True)  # waits for approval: its call stays open
    assert paused.status == "paused"
    assert session.run("look it up", stream=True).content == "done"
    assert session.run("and now?", stream=True).content == "done"
    assert all(_pairs_are_sound(call["messages"]) for call in adapter.calls)
    ids = [call.id for m in session.history() for call in m.tool_calls or ()]
    assert len(ids) == len(set(ids)) == 3
