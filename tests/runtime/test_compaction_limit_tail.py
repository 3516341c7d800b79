"""compact_messages(limit=) sizes the kept tail from the limit: with the leading system
messages and the summary, the history it leaves holds at most ``limit`` messages when it
can. It always kept 4 recent messages, so a worker with instructions had 6 messages over a
limit of 5 right after a compaction (review of 70aa45f)."""

from __future__ import annotations

import asyncio

import pytest

from deskwork.core.message import Message
from deskwork.runtime.context import SUMMARY_TAIL_MESSAGES, compact_messages
from deskwork.testing import ScriptedAdapter, reply


def _history(system: int, others: int) -> list[Message]:
    head = [Message(role="system", content=f"s{i}") for i in range(system)]
    roles = ("user", "assistant")
    return head + [Message(role=roles[i % 2], content=f"m{i}") for i in range(others)]


def _compact(messages: list[Message], limit: int | None) -> list[Message]:
    adapter = ScriptedAdapter([reply("SUMMARY")])
    compacted = asyncio.run(compact_messages(adapter, "m", messages, limit=limit))
    assert compacted is not None
    return compacted[0]


@pytest.mark.parametrize(("system", "limit", "kept"), [(1, 5, 3), (2, 5, 2), (1, 7, 4), (0, 5, 4)])
def test_the_tail_leaves_room_for_the_system_messages(system: int, limit: int, kept: int) -> None:
    compacted = _compact(_history(system, 9), limit)
    assert len(compacted) == system + 1 + kept <= limit
    assert [m.content for m in compacted[system + 1 :]] == [f"m{i}" for i in range(9 - kept, 9)]


def test_at_least_one_recent_message_stays() -> None:
    compacted = _compact(_history(5, 9), 5)
    assert [m.content for m in compacted[6:]] == ["m8"]  # over the limit: five system ones


def test_without_a_limit_four_stay() -> None:
    compacted = _compact(_history(3, 9), None)
    assert len(compacted) == 3 + 1 + SUMMARY_TAIL_MESSAGES


def test_an_earlier_summary_makes_no_room_for_itself() -> None:
    first = _compact(_history(1, 9), 5)  # s0, summary, m6 m7 m8
    again = _compact([*first, Message(role="user", content="m9")], 5)
    assert [m.content for m in again[2:]] == ["m7", "m8", "m9"]
    assert len(again) == 5
