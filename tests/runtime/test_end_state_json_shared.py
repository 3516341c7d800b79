"""A run's end state is dumped to JSON once: its redaction's text is what the store keeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.message import Message
from deskwork.core.state import RunState
from deskwork.store import InMemoryRunStore, RunStore, SQLiteRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import KNOWN_JSON, model_json


@tool()
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_end_state_is_dumped_once_and_stored_equal(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: RunStore = InMemoryRunStore() if kind == "memory" else SQLiteRunStore(tmp_path / "r.db")
    dumps: list[RunState] = []
    dump = RunState.model_dump_json

    def counted(self: RunState, **kwargs: Any) -> str:
        dumps.append(self)
        return dump(self, **kwargs)

    monkeypatch.setattr(RunState, "model_dump_json", counted)
    adapter = ScriptedAdapter([call_tool("add", a=2, b=3), reply("5")])
    desk = Desk(model="m", adapter=adapter, run_store=store)
    report = desk.run(Worker(name="w", tools=[add]), Job(input="add"))
    assert report.status == "completed"
    assert len(dumps) == 1  # for the redaction's scan; the store kept that text
    record = store.get_run(report.run_id)
    assert record is not None and record.state is not None
    assert record.state == dumps[0]
    assert [m.content for m in record.state.messages][-1] == "5"
    store.close()


def test_model_json_gives_the_known_text_for_that_model_only() -> None:
    model = Message(role="user", content="hi")
    twin = Message(role="user", content="hi")
    token = KNOWN_JSON.set((model, "the known text"))
    try:
        assert model_json(model) == "the known text"
        assert model_json(twin) == twin.model_dump_json()  # equal, but another object
    finally:
        KNOWN_JSON.reset(token)
    assert model_json(model) == model.model_dump_json()
