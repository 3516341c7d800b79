"""A structured reply of whitespace with an unclosed fence (JSON mode emitting newlines until
max_tokens) is refused at once: the fence patterns backtracked on it, taking minutes on the
event loop that every other run of the process shares."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel, ValidationError

from deskwork.adapters.base import parse_structured


class Total(BaseModel):
    total: int


@pytest.mark.parametrize(
    "reply",
    ["```json\n" + "\n" * 100_000, "{" + " " * 100_000 + "x", "```" + " " * 100_000 + "```"],
    ids=["unclosed fence", "spaces in braces", "empty fence"],
)
def test_a_long_run_of_whitespace_is_refused_at_once(reply: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValidationError):
        parse_structured(reply, Total)
    assert time.perf_counter() - started < 1.0  # quadratic: minutes


@pytest.mark.parametrize(
    "reply",
    [
        '{"total": 3}',
        '```json\n{"total": 3}\n```',
        '```\n{"total": 3}\n```',
        'First: ```json\n{"bad": 1}\n``` then ```json {"total": 3} ```',
        '  ```Json {"total": 3}```  ',
    ],
)
def test_a_fenced_or_bare_reply_still_parses(reply: str) -> None:
    assert parse_structured(reply, Total) == Total(total=3)
