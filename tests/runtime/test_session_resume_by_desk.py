"""A paused session turn resumed through the desk (``desk.resume``, ``desk.aresume``, by its
Report or run id) is saved to its session as ``session.resume`` saves it: the session's
history lost the rest of the turn, so the next turn never saw the tool's result or the
answer."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.core.message import Message
from deskwork.store import InMemoryRunStore, InMemorySessionStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool


@tool(requires_confirmation=True)
def order(item: str) -> str:
    """Order an item (after approval)."""
    return f"ordered {item}"


def _policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    last = messages[-1]
    if last["role"] == "tool":
        return reply(f"done: {last['content']}")
    if last["content"] == "beans?":
        return call_tool("order", item="beans")
    return reply(
        " | ".join(m["content"] for m in messages if m["role"] != "system" and m["content"])
    )


def _desk() -> tuple[Desk, Worker]:
    adapter = ScriptedAdapter(default=_policy)
    desk = Desk(
        model="scripted",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        session_store=InMemorySessionStore(),
    )
    return desk, Worker(name="clerk", tools=[order])


def _turns(history: list[Message]) -> list[tuple[str, Any]]:
    return [(m.role, m.content) for m in history if m.content is not None]


def _resumed(desk: Desk, paused: Any, how: str) -> Any:
    if how == "report":
        return desk.resume(paused, True)
    return desk.resume(paused.run_id, True)


@pytest.mark.parametrize("how", ["report", "run id"])
def test_the_next_turn_sees_the_result_of_a_turn_the_desk_resumed(how: str) -> None:
    desk, worker = _desk()
    session = desk.session(worker, "s1")
    assert session is not None
    paused = session.run("beans?")
    assert paused.status == "paused"
    assert _resumed(desk, paused, how).content == "done: ordered beans"
    expected = [("user", "beans?"), ("tool", "ordered beans"), ("assistant", "done: ordered beans")]
    assert _turns(session.history()) == expected
    later = session.run("and?")
    assert later.content == "beans? | ordered beans | done: ordered beans | and?"


async def test_aresume_saves_as_session_aresume_does() -> None:
    by_desk, worker = _desk()
    by_session, _ = _desk()
    histories = []
    for desk in (by_desk, by_session):
        session = desk.session(worker, "s1")
        assert session is not None
        paused = await session.arun("beans?")
        resume = desk.aresume if desk is by_desk else session.aresume
        assert (await resume(paused, True)).status == "completed"
        histories.append(_turns(session.history()))
    assert histories[0] == histories[1]


def test_a_turn_of_a_session_closed_meanwhile_resumes_and_saves_nothing() -> None:
    desk, worker = _desk()
    session = desk.session(worker, "s1")
    assert session is not None
    paused = session.run("beans?")
    session.close()
    assert desk.resume(paused, True).content == "done: ordered beans"
    assert desk.session_store.get_session("s1") is None
