"""The runtime's token hold-back: no secret is stored split over streamed tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskwork.adapters.base import StreamChunk
from deskwork.core.redact import redact_text
from deskwork.core.stream_redact import TokenHoldback
from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.store.sqlite import SQLiteRunStore
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import reply

SPLITS = [
    ["Your key is sk-li", "ve-abcdefghijklmnop0123", " ok"],
    ["use s", "k-abcdefghijklmnop and go"],
    ["Authorization: Bear", "er abcdefghijk123 done"],
    ['{"pass', 'word": "hunter2x"}'],
    ['{"my', 'password": "hunter2x"}'],
    ["set password=hun", "ter2x now"],
    ["db at postgresql", "://admin:hunter2x@db/x"],
    ["db at postgresql://admin:hun", "ter2x@db/x"],
    ["api_", "key=hunter2x", " and ", *(f"w{i} " for i in range(60)), "sk-", "abcdefghijk"],
]
CLEAR = ["hunter2x", "abcdefghijk", "abcdefghijklmnop"]


def _released(pieces: list[str]) -> list[str]:
    guard = TokenHoldback()
    out = [guard.push(p) for p in pieces]
    return [*out, guard.flush()]


@pytest.mark.parametrize("pieces", SPLITS)
def test_no_part_holds_a_secret_and_the_parts_join_to_the_redacted_text(
    pieces: list[str],
) -> None:
    parts = _released(pieces)
    assert "".join(parts) == redact_text("".join(pieces))
    for secret in CLEAR:
        assert all(secret not in part for part in parts)
        assert all(secret[:4] not in part or "<redacted>" in part for part in parts)


def test_plain_tokens_go_out_as_they_come() -> None:
    assert _released(["Hello", " from", " a generator"]) == ["Hello", " from", " a generator", ""]
    # only a tail that could start a secret waits for the next token
    assert _released(["the word", "s here"]) == ["the word", "s here", ""]
    assert _released(["it is", " fine"]) == ["it i", "s fine", ""]


class _Splitting(ScriptedAdapter):
    def __init__(self, pieces: list[str]) -> None:
        super().__init__([reply("".join(pieces))] * 2)
        self.pieces = pieces

    async def acomplete(self, *, stream: bool, **kwargs: Any) -> Any:
        response = await super().acomplete(stream=False, **kwargs)
        if not stream:
            return response

        async def chunks() -> Any:
            for piece in self.pieces:
                yield StreamChunk(content=piece)

        return chunks()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_store_never_holds_a_secret_split_over_tokens(kind: str, tmp_path: Path) -> None:
    pieces = SPLITS[0] + SPLITS[5] + SPLITS[6]
    store = InMemoryRunStore() if kind == "memory" else SQLiteRunStore(tmp_path / "runs.db")
    desk = Desk(model="m", adapter=_Splitting(pieces), run_store=store)
    report = desk.run(Worker(name="w"), "hi", stream=True)
    assert report.status == "completed", report.errors
    events = store.get_events(report.run_id)
    tokens = [e.payload["token"] for e in events if e.type == "stream.token"]
    [message] = [e.payload["content"] for e in events if e.type == "assistant.message"]
    assert "".join(tokens) == redact_text("".join(pieces)) == message
    assert all(tokens)
    for secret in CLEAR:
        assert all(secret not in t for t in tokens)
    types = [e.type for e in events]
    last_token = max(i for i, t in enumerate(types) if t == "stream.token")
    assert types.index("llm.completed") > last_token
