"""The shipped test double names its tool calls ``call_0``, ``call_1``, ... across its
replies, not per reply: ``call_0`` came back every reply, so a session tested with it
took a paused turn's open call as answered by a later turn's ``call_0`` and sent the model a
history a real provider refuses (the mis-pairing the adapters no longer make). The ids stay
deterministic: a first reply's first call is still ``call_0``."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.store import InMemoryRunStore, InMemorySessionStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply
from deskwork.tools import tool


@tool(requires_confirmation=True)
def send(to: str) -> str:
    """Send a mail (after approval)."""
    return f"sent to {to}"


@tool
def look(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def _policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    last = messages[-1]
    if last["role"] == "tool":
        return reply("done")
    return call_tool("send", to="ann") if last["content"] == "mail" else call_tool("look", q="x")


def _answered_in_order(messages: list[dict[str, Any]]) -> bool:
    """Every assistant tool call is answered right after it (what providers require)."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_ids:
                return False
            open_ids.discard(message["tool_call_id"])
        elif open_ids:
            return False
        else:
            open_ids = {call["id"] for call in message.get("tool_calls") or ()}
    return not open_ids


@pytest.mark.parametrize("stream", [False, True])
def test_a_session_s_later_turn_does_not_answer_a_paused_call(stream: bool) -> None:
    adapter = ScriptedAdapter(default=_policy)
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                session_store=InMemorySessionStore())  # fmt: skip
    session = desk.session(Worker(name="w", tools=[send, look]), "s1")
    assert session is not None
    assert session.run("mail", stream=stream).status == "paused"  # its call stays open
    assert session.run("look it up", stream=stream).content == "done"
    assert session.run("and now?", stream=stream).content == "done"
    assert all(_answered_in_order(call["messages"]) for call in adapter.calls)
    ids = [call.id for m in session.history() for call in m.tool_calls or ()]
    assert ids == ["call_0", "call_1", "call_2"]


@pytest.mark.parametrize("stream", [False, True])
def test_ids_run_on_across_replies_with_several_calls(stream: bool) -> None:
    adapter = ScriptedAdapter(
        [call_tools(("look", {"q": "a"}), ("look", {"q": "b"})), call_tool("look", q="c"),
         reply("done")]
    )  # fmt: skip
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[look]), "go", stream=stream)
    assert report.status == "completed", report.errors
    sent = adapter.calls[-1]["messages"]
    ids = [call["id"] for message in sent for call in message.get("tool_calls") or ()]
    assert ids == ["call_0", "call_1", "call_2"]
