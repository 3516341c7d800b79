"""examples/meeting_assistant: realtime agents fire on turns, keywords, silence, events, time."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from deskwork.realtime import Blackboard
from deskwork.store.sqlite import SQLiteRunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "meeting_assistant"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("meeting_assistant_run", EXAMPLE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_offline_meeting_fires_every_kind_of_trigger(example: ModuleType, tmp_path: Path) -> None:
    result = asyncio.run(example.run_meeting(storage_dir=tmp_path))

    # turn-based: one action item per commitment, with owner and due date
    assert result.by_agent("action-tracker") == [
        "Action item: Chen will fix the login bug (due Wednesday)",
        "Action item: Ben will update the release notes",
        "Action item: Ben will write the dark mode spec (due next Friday)",
    ]
    items = [f.value for f in result.board.get_facts_by_type("action_item")]
    assert {(i["owner"], i["due"]) for i in items} == {
        ("Chen", "Wednesday"), ("Ben", None), ("Ben", "next Friday")}  # fmt: skip
    assert len(result.board.queues["action_items"]) == 3
    # event (phase 2): only the undated item gets a warning
    assert result.by_agent("owner-check") == [
        "“update the release notes” has no due date: ask Ben for one."
    ]
    # keywords: two decisions
    decisions = [f.key for f in result.board.get_facts_by_type("decision")]
    assert decisions == ["we agreed to move the launch to the 14th",
                         "Let's go with dark mode after the launch, not before"]  # fmt: skip
    assert result.board.get_var("last_decision") == decisions[-1]
    # silence: one 17 s pause; interval: once past 60 s, plus the final recap
    assert result.triggers.count("silence") == 1 and result.triggers.count("keyword") == 2
    assert result.triggers.count("interval") == 1 and result.triggers[-1] == "force"
    assert len(result.by_agent("facilitator")) == 1
    first_recap, final_recap = result.by_agent("recap")
    assert "1 decision(s)" in first_recap and "2 action item(s)" in first_recap
    assert "2 decision(s)" in final_recap and "3 action item(s)" in final_recap
    assert result.board.get_var("summary") == final_recap.removeprefix("Recap: ")

    # every turn is a stored run; the board is saved in the session store
    store = SQLiteRunStore(tmp_path / "deskwork.db")
    try:
        for run_id in result.run_ids:
            record = store.get_run(run_id)
            assert record is not None and record.status == "completed"
        types = [e.type for e in store.get_events(result.run_ids[0])]
    finally:
        store.close()
    assert "realtime.turn.started" in types and types[-1] == "run.completed"
    from deskwork import Desk

    desk = Desk(model="scripted/x", storage_dir=tmp_path)
    try:
        saved = Blackboard.load_from(desk.session_store, example.MEETING_ID)
    finally:
        desk.close()
    assert saved is not None and len(saved.get_facts_by_type("action_item")) == 3


def test_command_line_prints_the_minutes(
    example: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert example.main(["--storage-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "action: Ben — update the release notes (due ?)" in out
    assert "[warning] Due date checker" in out and "17 s of silence" in out
