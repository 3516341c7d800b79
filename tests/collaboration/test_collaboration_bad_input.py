"""Blackboard and Channel misuse: names that are not strings, numbers JSON cannot hold."""

from __future__ import annotations

import math
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
