"""Blackboard.subscribe and subscribe_all refuse what can never be called back: before, a
``None`` callback was kept, and every later write of the key logged a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.collaboration import Blackboard


@pytest.mark.parametrize("callback", [None, "print", 3])
def test_a_callback_that_cannot_be_called_is_refused(callback: Any) -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match="callable"):
        board.subscribe("plan", callback)
    with pytest.raises(TypeError, match="callable"):
        board.subscribe_all(callback)
    seen: list[tuple[str, Any, str]] = []
    board.subscribe("plan", lambda *call: seen.append(call))
    board.write("plan", {"step": 1}, author="lead")
    assert seen == [("plan", {"step": 1}, "lead")]  # the refused ones left nothing behind


def test_a_key_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(TypeError, match="key must be a string"):
        Blackboard().subscribe(1, lambda *_: None)  # type: ignore[arg-type]
