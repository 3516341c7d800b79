"""2.6 parity of the realtime Blackboard: queues, dict round trip, snapshot, fact priority,
reserved keys, and storing a session's board in deskwork's session stores."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentEngine, AgentResponse, Blackboard, Event, Fact
from deskwork.store import InMemorySessionStore, SQLiteSessionStore
from deskwork.store.session import SessionStore
from deskwork.testing import ScriptedAdapter


def filled() -> Blackboard:
    board = Blackboard(variables={"phase": "discovery", "n": 1.5})
    board.push_queue_items("questions", ["price?", {"q": "when?"}])
    board.add_fact(Fact(type="budget", key="primary", value=50_000, confidence=0.8, priority=2))
    board.update_memory("coach", {"count": 3})
    board.emit_event(Event(name="question_detected", payload={"q": "price?"}))
    return board


def test_push_queue_items_appends_in_order() -> None:
    board = Blackboard(queues={"q": ["a"]})
    board.push_queue_items("q", iter(["b", "c"]))
    board.push_queue_items("new", [])
    assert board.queues == {"q": ["a", "b", "c"], "new": []}
    assert board.pop_queue("q") == "a"


def test_to_dict_from_dict_round_trip() -> None:
    board = filled()
    data = board.to_dict()
    json.dumps(data)  # JSON all the way down
    restored = Blackboard.from_dict(json.loads(json.dumps(data)))
    assert restored.to_dict() == data
    assert restored.get_fact("budget", "primary") == board.get_fact("budget", "primary")
    assert Blackboard.from_dict({"variables": {"x": 1}}).get_var("x") == 1
    with pytest.raises(ValueError, match="unknown Blackboard containers"):
        Blackboard.from_dict({"variables": {}, "notes": []})


def test_snapshot_is_an_independent_writable_board() -> None:
    board = filled()
    copy = board.snapshot()
    assert isinstance(copy, Blackboard) and copy is not board
    assert copy.to_dict() == board.to_dict()
    copy.set_var("phase", "closing")
    copy.push_queue("questions", "more?")
    assert board.get_var("phase") == "discovery"
    assert board.queue_length("questions") == 2
    thawed = board.frozen_copy().snapshot()
    thawed.set_var("ok", True)  # a snapshot of a frozen board is writable
    assert thawed.get_var("ok") is True


def test_fact_priority_wins_before_confidence() -> None:
    board = Blackboard()
    board.add_fact(Fact(type="budget", value="high-priority", confidence=0.5, priority=10))
    board.add_fact(Fact(type="budget", value="confident", confidence=0.99, priority=0))
    assert board.get_fact("budget").value == "high-priority"  # type: ignore[union-attr]
    board.add_fact(Fact(type="budget", value="same priority, surer", confidence=0.6, priority=10))
    assert board.get_fact("budget").value == "same priority, surer"  # type: ignore[union-attr]
    board.add_fact(Fact(type="budget", value="outranks", confidence=0.1, priority=11))
    assert board.get_fact("budget").value == "outranks"  # type: ignore[union-attr]


async def test_engine_stamps_agent_priority_so_facts_survive_later_turns() -> None:
    def fact(value: str, confidence: float) -> AgentResponse:
        return AgentResponse(facts=[Fact(type="budget", value=value, confidence=confidence)])

    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(ScriptAgent("compliance", priority=10, response=fact("verified", 0.5)))
    board = Blackboard()
    await engine.process_turn(make_context(board=board))
    engine.replace_agents([ScriptAgent("guesser", priority=0, response=fact("guess", 0.99))])
    await engine.process_turn(make_context(board=board))
    kept = board.get_fact("budget")
    assert kept is not None and (kept.value, kept.priority) == ("verified", 10)


def test_writing_a_reserved_key_warns(caplog: pytest.LogCaptureFixture) -> None:
    board = Blackboard()
    with caplog.at_level(logging.WARNING, logger="deskwork.realtime.blackboard"):
        board.set_var("phase", "x")
        assert caplog.records == []
        board.set_var("sys.turn_count", 5)
    [record] = caplog.records
    assert "sys.turn_count" in record.getMessage()
    assert board.get_var("sys.turn_count") == 5  # applied; the engine rewrites it each turn


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    made: SessionStore = (
        InMemorySessionStore()
        if request.param == "memory"
        else SQLiteSessionStore(tmp_path / "sessions.db")
    )
    yield made
    made.close()


async def test_board_is_stored_and_restored_through_the_session_store(
    store: SessionStore,
) -> None:
    assert Blackboard.load_from(store, "call-1") is None
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(
        ScriptAgent("coach", response=AgentResponse(variable_updates={"turns": 1}))
    )
    board = filled()
    await engine.process_turn(make_context(board=board, session_id="call-1"))
    board.save_to(store, "call-1")
    board.set_var("after_save", True)
    board.save_to(store, "call-1")  # saving again replaces the stored copy
    restored = Blackboard.load_from(store, "call-1")
    assert restored is not None
    assert restored.to_dict() == board.to_dict()
    assert restored.read_entry("variables").author == "realtime"  # type: ignore[union-attr]
    assert Blackboard.load_from(store, "call-2") is None
    # the board lives in a session of its own, never in a worker's history of the same id
    assert store.get_session("call-1") is None
    record = store.get_session("realtime:call-1")
    assert record is not None and record.worker_name == "deskwork.realtime"
    assert len(store.get_messages("realtime:call-1")) == 1
