"""The architecture's Blackboard view (on one shared board) and the coordinator parser."""

from __future__ import annotations

from deskwork import Report
from deskwork.architecture import Blackboard, BlackboardEntry
from deskwork.architecture.blackboard import Contribute, SkipRound, Terminate, interpret
from deskwork.collaboration import Blackboard as SharedBoard


def test_render_for_shows_public_entries_and_only_the_agents_own_notes() -> None:
    view = Blackboard()
    view.post("user", "the problem", kind="problem")
    view.post("a", "public idea")
    view.post("coord", "psst, check the logs", kind="note", private_to="a")
    view.post("coord", "b's secret", private_to="b")

    for_a = view.render_for("a")
    assert for_a == (
        "Blackboard:\n[1] user (problem):\nthe problem\n[2] a (contribution):\npublic idea"
        "\n\nYour private notes:\n[1] coord (note):\npsst, check the logs"
    )
    assert "b's secret" not in for_a
    assert "psst" not in view.render_for("b") and "b's secret" in view.render_for("b")
    assert "private notes" not in view.render_for("c")
    assert Blackboard().render_for("a") == "Blackboard:\n(empty)"


def test_public_and_private_are_snapshots_of_entries() -> None:
    view = Blackboard()
    entry = view.post("a", "x", kind="answer")
    view.post("b", "y", private_to="a")
    assert isinstance(entry, BlackboardEntry) and entry.kind == "answer"
    assert [(e.author, e.content, e.kind) for e in view.public] == [("a", "x", "answer")]
    assert list(view.private) == ["a"]
    assert [(e.author, e.content) for e in view.private["a"]] == [("b", "y")]
    assert view.public[0].timestamp == entry.timestamp


def test_entries_live_on_the_shared_board_and_survive_to_state() -> None:
    shared = SharedBoard()
    shared.write("unrelated", 1, author="someone")
    view = Blackboard(shared)
    view.post("a", "x")
    view.post("b", "note", private_to="a")
    assert shared.keys() == ["unrelated", "public", "private:a"]
    assert shared.read_entry("public") is not None

    restored = Blackboard(SharedBoard.from_state(view.to_state()))
    assert restored.render_for("a") == view.render_for("a")
    assert restored.public == view.public

    view.reset()
    assert shared.keys() == ["unrelated"]


def test_final_entry_prefers_the_last_answer() -> None:
    view = Blackboard()
    assert view.final_entry() is None
    view.post("user", "problem", kind="problem")
    assert view.final_entry() is None
    view.post("a", "first")
    view.post("b", "the answer", kind="answer")
    view.post("c", "later thoughts")
    final = view.final_entry()
    assert final is not None and final.content == "the answer"


def _completed(content: str | None, data: object = None) -> Report:
    return Report(run_id="r", status="completed", content=content, data=data)


def test_interpret_tolerates_plain_text_json() -> None:
    agents = ["a", "b"]
    prose = 'Sure! {"terminate": false, "next_agent": "b", "instruction": "go"} Thanks.'
    assert interpret(_completed(prose), agents) == Contribute("b", "go")
    fenced = '```json\n{"next_agent": "a"}\n```'
    assert interpret(_completed(fenced), agents) == Contribute("a", None)
    assert interpret(_completed(None, {"terminate": True}), agents) == Terminate()


def test_interpret_never_raises_on_nonsense() -> None:
    agents = ["a"]
    assert interpret(_completed("no json here"), agents) == SkipRound(
        "malformed_coordinator_output", "no json here"
    )
    skipped = interpret(_completed('{"next_agent": 3}'), agents)
    assert isinstance(skipped, SkipRound) and skipped.reason == "malformed_coordinator_output"
    unknown = interpret(_completed('{"next_agent": "z"}'), agents)
    assert isinstance(unknown, SkipRound) and unknown.reason == "unknown_agent"
    failed = interpret(Report(run_id="r", status="failed", errors=["boom"]), agents)
    assert failed == SkipRound("coordinator_failed", "boom")
