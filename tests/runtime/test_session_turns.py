"""Turns of one session sent at once run one after another: each turn sees the turns before
it, and none is lost from the history (each saved its own history over the other's)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool


@tool(description="Wait a moment")
async def pause(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "waited"


def _policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    if messages[-1]["role"] == "user":
        return call_tool("pause", seconds=0.2)
    return reply(f"{sum(m['role'] == 'user' for m in messages)} user messages seen")


def _session(tmp_path: Path) -> Any:
    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=_policy), storage_dir=tmp_path)
    return desk.session(Worker(name="w", tools=[pause]), "s1")


def _users(session: Any) -> list[str]:
    return [m.content for m in session.history() if m.role == "user"]


async def test_two_turns_at_once_both_stay_and_the_second_sees_the_first(
    tmp_path: Path,
) -> None:
    session = _session(tmp_path)
    first, second = await asyncio.gather(session.arun("one"), session.arun("two"))
    assert _users(session) == ["one", "two"]
    assert [first.content, second.content] == ["1 user messages seen", "2 user messages seen"]


def test_turns_from_two_threads_both_stay(tmp_path: Path) -> None:
    session = _session(tmp_path)
    threads = [threading.Thread(target=session.run, args=(text,)) for text in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(_users(session)) == ["a", "b"]


async def test_a_cancelled_waiting_turn_holds_nothing(tmp_path: Path) -> None:
    session = _session(tmp_path)
    running = asyncio.ensure_future(session.arun("one"))
    await asyncio.sleep(0.05)
    waiting = asyncio.ensure_future(session.arun("never"))
    await asyncio.sleep(0.05)
    waiting.cancel()
    await running
    assert (await session.arun("three")).content == "2 user messages seen"
    assert _users(session) == ["one", "three"]


async def test_waiting_turns_run_in_the_order_they_were_sent(tmp_path: Path) -> None:
    session = _session(tmp_path)

    async def later(text: str, delay: float) -> Any:
        await asyncio.sleep(delay)
        return await session.arun(text)

    await asyncio.gather(*(later(text, i * 0.02) for i, text in enumerate("abcde")))
    assert _users(session) == list("abcde")


async def test_a_turn_that_starts_a_turn_of_its_own_session_is_refused(tmp_path: Path) -> None:
    def ask_again(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
        last = messages[-1]
        return call_tool("again") if last["role"] == "user" else reply(str(last["content"]))

    @tool(description="Ask the session again")
    async def again() -> str:
        inner = await session.arun("inner")  # it waited for its own turn forever
        return inner.content or ""

    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=ask_again), storage_dir=tmp_path)
    session = desk.session(Worker(name="w", tools=[again]), "s1")
    report = await asyncio.wait_for(session.arun("outer"), timeout=10)
    assert report.status == "completed"
    assert "cannot start another turn of it" in (report.content or "")
