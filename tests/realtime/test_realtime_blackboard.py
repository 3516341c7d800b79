"""The realtime Blackboard: five containers on the one deskwork board."""

from __future__ import annotations

import json
import threading

import pytest

from deskwork.collaboration import Blackboard as SharedBlackboard
from deskwork.realtime import AgentContext, Blackboard, Event, Fact, ReadOnlyBlackboardError


def test_is_the_deskwork_blackboard_with_one_key_per_container() -> None:
    board = Blackboard()
    assert isinstance(board, SharedBlackboard)
    assert board.keys() == ["variables", "events", "queues", "facts", "memory"]
    board.set_var("phase", "negotiation", author="host")
    entry = board.read_entry("variables")
    assert entry is not None
    assert entry.value == {"phase": "negotiation"}
    assert entry.author == "host"


def test_event_operations() -> None:
    board = Blackboard()
    board.emit_event(Event(name="question_detected", payload={"q": "price?"}, source_agent="x"))
    board.emit_event(Event(name="question_detected", payload={"q": "when?"}, source_agent="x"))
    board.emit_event(Event(name="objection", source_agent="y"))
    assert board.has_event("question_detected")
    assert not board.has_event("nothing")
    assert [e.payload["q"] for e in board.get_events_by_name("question_detected")] == [
        "price?",
        "when?",
    ]
    assert board.count_events("question_detected") == 2
    board.clear_events()
    assert board.events == []
    assert not board.has_event("objection")


def test_event_timestamp_defaults_to_now() -> None:
    event = Event(name="e", payload={}, source_agent="a")
    assert event.timestamp > 1_600_000_000


def test_variable_operations() -> None:
    board = Blackboard()
    assert board.get_var("missing") is None
    assert board.get_var("missing", 7) == 7
    board.set_var("sentiment", 0.7)
    board.set_var("flag", 0)
    assert board.get_var("sentiment") == 0.7
    assert board.has_var("flag")
    board.delete_var("sentiment")
    board.delete_var("never-set")
    assert board.variables == {"flag": 0}


def test_queue_operations_are_fifo() -> None:
    board = Blackboard()
    assert board.pop_queue("q") is None
    assert board.peek_queue("q") is None
    assert board.queue_length("q") == 0
    board.push_queue("q", "first")
    board.push_queue("q", {"text": "second"})
    assert board.queue_length("q") == 2
    assert board.peek_queue("q") == "first"
    assert board.pop_queue("q") == "first"
    assert board.pop_queue("q") == {"text": "second"}
    assert board.pop_queue("q") is None
    board.push_queue("q", 1)
    board.clear_queue("q")
    assert board.queues == {"q": []}


def test_fact_operations_deduplicate_by_type_and_key() -> None:
    board = Blackboard()
    board.add_fact(Fact(type="budget", key="primary", value=50_000, confidence=0.9))
    board.add_fact(Fact(type="budget", key="secondary", value=20_000, confidence=0.8))
    board.add_fact(Fact(type="budget", key="primary", value=40_000, confidence=0.5))
    primary = board.get_fact("budget", "primary")
    assert primary is not None
    assert primary.value == 50_000  # lower confidence does not replace
    board.add_fact(Fact(type="budget", key="primary", value=60_000, confidence=0.9))
    assert board.get_fact("budget", "primary").value == 60_000  # type: ignore[union-attr]
    assert sorted(f.key or "" for f in board.get_facts_by_type("budget")) == [
        "primary",
        "secondary",
    ]
    assert board.get_fact("timeline") is None


def test_fact_without_key_replaces_any_fact_of_its_type() -> None:
    board = Blackboard(facts=[Fact(type="stage", value="discovery")])
    board.add_fact(Fact(type="stage", value="closing"))
    assert [f.value for f in board.facts] == ["closing"]


def test_memory_operations() -> None:
    board = Blackboard()
    assert board.get_memory("agent") == {}
    board.update_memory("agent", {"count": 1})
    board.update_memory("agent", {"last": "price"})
    assert board.get_memory("agent") == {"count": 1, "last": "price"}
    board.set_memory("agent", {"reset": True})
    assert board.memory == {"agent": {"reset": True}}


def test_container_reads_are_snapshots() -> None:
    board = Blackboard(variables={"a": [1]})
    variables = board.variables
    variables["a"].append(2)
    variables["b"] = 1
    assert board.variables == {"a": [1]}


def test_json_round_trip_restores_every_container() -> None:
    board = Blackboard(variables={"phase": "closing"}, memory={"coach": {"n": 2}})
    board.push_queue("pending", {"text": "What's the price?"})
    board.add_fact(Fact(type="budget", value="$50,000", confidence=0.9, source_agent="x"))
    board.emit_event(Event(name="e", payload={"k": 1}, source_agent="x"))
    restored = Blackboard.from_state(json.loads(json.dumps(board.to_state())))
    assert isinstance(restored, Blackboard)
    assert restored.as_dict() == board.as_dict()
    assert restored.get_fact("budget").confidence == 0.9  # type: ignore[union-attr]
    restored.push_queue("pending", "more")  # still a working board
    assert restored.queue_length("pending") == 2


def test_model_validate_accepts_containers_and_state() -> None:
    board = Blackboard(variables={"x": 1})
    assert Blackboard.model_validate(board.as_dict()).as_dict() == board.as_dict()
    assert Blackboard.model_validate(board.to_state()).get_var("x") == 1
    with pytest.raises(ValueError, match="unknown Blackboard containers"):
        Blackboard.model_validate({"variabls": {}})


def test_agent_context_holds_the_board_by_reference_and_serializes_it() -> None:
    board = Blackboard(variables={"phase": "x"})
    context = AgentContext(session_id="s", recent_segments=[], blackboard=board)
    assert context.blackboard is board
    dumped = json.loads(context.model_dump_json())
    assert dumped["blackboard"]["variables"] == {"phase": "x"}
    again = AgentContext.model_validate(dumped)
    assert again.blackboard is not None
    assert again.blackboard.get_var("phase") == "x"


def test_frozen_copy_reads_but_refuses_writes() -> None:
    board = Blackboard(variables={"a": 1})
    frozen = board.frozen_copy()
    board.set_var("a", 2)
    assert frozen.get_var("a") == 1
    for write in (
        lambda: frozen.set_var("a", 3),
        lambda: frozen.push_queue("q", 1),
        lambda: frozen.clear_events(),
        lambda: frozen.write("x", 1, author="y"),
        lambda: frozen.clear(),
    ):
        with pytest.raises(ReadOnlyBlackboardError):
            write()
    assert frozen.frozen and not board.frozen


def test_non_json_values_are_rejected_without_changing_the_board() -> None:
    board = Blackboard(variables={"a": 1})
    with pytest.raises(TypeError, match="JSON"):
        board.set_var("bad", object())
    assert board.variables == {"a": 1}


def test_concurrent_updates_lose_nothing() -> None:
    board = Blackboard()
    per_thread, threads = 60, 6

    def work(n: int) -> None:
        for i in range(per_thread):
            board.push_queue("q", f"{n}-{i}")
            board.set_var(f"v{n}-{i}", i)
            board.update_memory("agent", {f"{n}-{i}": i})
            board.add_fact(Fact(type="t", key=f"{n}-{i}", value=i))

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    total = per_thread * threads
    assert board.queue_length("q") == total
    assert len(board.variables) == total
    assert len(board.get_memory("agent")) == total
    assert len(board.facts) == total
    popped = [board.pop_queue("q") for _ in range(total)]
    assert len(set(popped)) == total


def test_agent_context_json_schema_and_plain_board_rejection() -> None:
    schema = AgentContext.model_json_schema()
    assert "blackboard" in schema["properties"]
    with pytest.raises(ValueError, match=r"expected a deskwork\.realtime\.Blackboard"):
        AgentContext(session_id="s", blackboard=SharedBlackboard())  # type: ignore[arg-type]


def test_count_events_without_a_name_counts_all() -> None:
    board = Blackboard(events=[Event(name="a"), {"name": "b", "payload": {"x": 1}}])
    assert board.count_events() == 2
    assert board.count_events("a") == 1


async def test_board_operations_and_turns_make_no_snapshot_they_drop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shared board's ``update`` returns a snapshot (a deep copy of the whole
    container); the realtime operations and the engine drop it. Before, every set_var,
    push, fact and merge paid for it: about 4% of a model-free turn."""
    from rt_support import ScriptAgent, make_context

    from deskwork.collaboration import BlackboardEntry
    from deskwork.realtime import AgentEngine, AgentResponse
    from deskwork.testing import ScriptedAdapter

    def no_snapshot(entry: BlackboardEntry) -> BlackboardEntry:
        raise AssertionError("a snapshot was made and dropped")

    board = Blackboard(variables={"phase": "discovery"})
    monkeypatch.setattr(BlackboardEntry, "_copy", no_snapshot)
    board.set_var("phase", "closing")
    board.push_queue("questions", "price?")
    board.add_fact(Fact(type="budget", value=10))
    board.update_memory("coach", {"seen": True})
    board.emit_event(Event(name="e"))
    engine = AgentEngine(adapter=ScriptedAdapter())
    reply = AgentResponse(variable_updates={"score": 1}, queue_pushes={"q": [1]})
    engine.register_agent(ScriptAgent("coach", response=reply))
    await engine.process_turn(make_context(board=board))
    assert board.get_var("score") == 1 and board.get_var("phase") == "closing"
