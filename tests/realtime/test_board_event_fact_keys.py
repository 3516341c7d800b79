"""A realtime board refuses an event payload key or a fact value key holding a lone
surrogate (half an emoji) where it is written, as its other writes do: an event's top-level
key was silently kept as U+FFFD characters, and a fact's raised a raw UnicodeEncodeError."""

from __future__ import annotations

import pytest

from deskwork.realtime import Blackboard
from deskwork.realtime.core._records import Event, Fact

KEY = "\ud83d"


@pytest.mark.parametrize("payload", [{KEY: 1}, {"nested": {KEY: 1}}], ids=["top level", "nested"])
def test_an_events_payload_key_with_a_lone_surrogate_is_refused(payload: dict[str, object]) -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match=r"event 'e': the key '.*' holds a lone surrogate"):
        board.emit_event(Event(name="e", payload=payload))
    assert not board.has_event("e")


def test_a_facts_value_key_with_a_lone_surrogate_is_refused() -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match=r"fact 't': the key '.*' holds a lone surrogate"):
        board.add_fact(Fact(type="t", key="k", value={KEY: 1}))


def test_a_lone_surrogate_in_a_value_and_a_full_emoji_key_are_kept() -> None:
    board = Blackboard()
    board.emit_event(Event(name="e", payload={"\U0001f600": KEY}))
    board.add_fact(Fact(type="t", key="k", value={"\U0001f600": KEY}))
    assert board.has_event("e")
