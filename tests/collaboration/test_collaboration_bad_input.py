"""Blackboard and Channel misuse: names that are not strings, numbers JSON cannot hold."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

import pytest

from deskwork.collaboration import Blackboard, Channel


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_hold_is_refused_not_saved_as_null(number: float) -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match="key 'score' is not JSON-serializable"):
        board.write("score", {"score": number}, author="judge")
    with pytest.raises(TypeError, match="key 'score' is not JSON-serializable"):
        board.update("score", lambda _: number, author="judge")
    assert "score" not in board
    with pytest.raises(TypeError, match="not JSON-serializable"):
        Channel().send("a", "b", [number])


@pytest.mark.parametrize("name", [None, 5, b"key"])
def test_keys_and_authors_must_be_strings(name: Any) -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match=f"key must be a string, got {type(name).__name__}"):
        board.write(name, 1, author="a")
    with pytest.raises(TypeError, match="author must be a string"):
        board.update("k", lambda v: 1, author=name)
    assert len(board) == 0


@pytest.mark.parametrize("name", [None, 5])
def test_channel_names_must_be_strings(name: Any) -> None:
    channel = Channel()
    with pytest.raises(TypeError, match="recipient must be a string"):
        channel.send("a", name, "hello")  # None would have become a broadcast
    with pytest.raises(TypeError, match="sender must be a string"):
        channel.broadcast(name, "hello")
    with pytest.raises(TypeError, match="recipient must be a string"):
        channel.receive(name)
    assert channel.all_messages() == []


@pytest.mark.parametrize(
    "value",
    [
        {"half \ud83d": 1},
        {"notes": [{"by \udc00": "x"}]},
        ({"\ud800": 1},),  # a tuple becomes a list
        OrderedDict([("\ud800", 1)]),
    ],
)
def test_a_key_with_a_lone_surrogate_is_refused_where_it_is_written(value: Any) -> None:
    """Before, the board and the channel took it, and then ``Blackboard.to_state()`` (a
    paused Workforce blackboard run's state) raised UnicodeEncodeError, as did saving the
    channel's state in a store, on every later try."""
    board, channel = Blackboard(), Channel()
    with pytest.raises(TypeError, match=r"key 'plan'.*the key .* holds a lone surrogate"):
        board.write("plan", value, author="a")
    with pytest.raises(TypeError, match="lone surrogate"):
        board.update("plan", lambda _: value, author="a")
    with pytest.raises(TypeError, match=r"message content from 'a'.*lone surrogate"):
        channel.send("a", "b", value)
    with pytest.raises(TypeError, match=r"message metadata.*lone surrogate"):
        channel.broadcast("a", "hi", metadata={"m": value})
    assert "plan" not in board and channel.all_messages() == []


def test_a_lone_surrogate_in_a_value_and_a_whole_emoji_in_a_key_are_kept() -> None:
    board = Blackboard()
    value = {"smile \U0001f600": "half \ud83d", "text \\ud800": ["\udc00"]}
    board.write("plan", value, author="a")
    state = json.loads(json.dumps(board.to_state()))
    assert Blackboard.from_state(state).read("plan") == value
    channel = Channel()
    channel.send("a", "b", value)
    assert Channel.from_state(channel.to_state()).receive("b")[0].content == value


def test_a_state_with_a_lone_surrogate_key_is_refused() -> None:
    state = _written("plan", {"k": 1})
    state["entries"] = [{**entry, "value": {"\ud800": 1}} for entry in state["entries"]]
    with pytest.raises(ValueError, match=r"invalid Blackboard state.*lone surrogate"):
        Blackboard.from_state(state)


def _written(key: str, value: Any) -> dict[str, Any]:
    board = Blackboard()
    board.write(key, value, author="a")
    return board.to_state()
