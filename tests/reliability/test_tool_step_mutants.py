"""Behaviour of ``deskwork.runtime._tool_step`` that surviving mutants showed was unpinned:
what the tool events carry, the unknown-tool answer, failure counts, pause prompts, and how
a resume answers the pending call while the turn's finished calls keep their results."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deskwork import ConfigurationError, Desk, ToolResult, Worker
from deskwork.core.report import Report
from deskwork.store import InMemoryRunStore, SQLiteRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tools, reply
from deskwork.tools import Tool, tool

pytestmark = pytest.mark.reliability

ran: list[str] = []


@tool()
def lookup(key: str) -> str:
    """Look a key up."""
    ran.append(f"lookup {key}")
    return f"value of {key}"


@tool(requires_confirmation=True)
def wire(amount: int, to: str) -> str:
    """Send money (asks first)."""
    ran.append(f"wire {amount} {to}")
    return "sent"


@tool(requires_user_input=True)
def ask(question: str, answer: str = "") -> str:
    """Ask the user."""
    return f"user said {answer}"


@tool(requires_handoff=True)
def transfer(agent_name: str = "") -> str:
    """Hand the conversation off."""
    ran.append(f"transfer {agent_name}")
    return f"handed to {agent_name}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def _desk(turns: list[Turn], tmp_path: Path) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns)
    desk = Desk(model="scripted", adapter=adapter, run_store=InMemoryRunStore(),
                storage_dir=tmp_path / ".deskwork")  # fmt: skip
    return desk, adapter


def _answers(adapter: ScriptedAdapter) -> list[str]:
    return [str(m["content"]) for m in adapter.calls[-1]["messages"] if m["role"] == "tool"]


def _run(tools: list[Tool], turns: list[Turn], tmp_path: Path) -> tuple[Report, ScriptedAdapter]:
    desk, adapter = _desk(turns, tmp_path)
    return desk.run(Worker(name="w", tools=tools), "go"), adapter


def test_tool_events_carry_the_call_id_and_the_tool_name(tmp_path: Path) -> None:
    report, _ = _run([lookup], [call_tools(("lookup", {"key": "a"})), reply("ok")], tmp_path)
    call_id = report.tool_calls[0].id
    started = [e for e in report.events if e.type == "tool.started"]
    assert [(e.source, e.payload) for e in started] == [("lookup", {"tool_call_id": call_id})]


@pytest.mark.parametrize(
    ("tools", "available"), [([lookup, wire], "lookup, wire"), ([], "none")], ids=["some", "none"]
)
def test_an_unknown_tool_is_answered_with_the_tools_there_are(
    tmp_path: Path, tools: list[Tool], available: str
) -> None:
    _, adapter = _run(tools, [call_tools(("nope", {})), reply("ok")], tmp_path)
    assert _answers(adapter) == [f"Error: unknown tool 'nope'; available tools: {available}"]


def test_a_cancelled_result_is_counted_as_a_cancellation(tmp_path: Path) -> None:
    @tool()
    def stop() -> ToolResult:
        """Report a cancelled call."""
        return ToolResult(error="stopped by the operator", cancelled=True)

    report, _ = _run([stop], [call_tools(("stop", {})), reply("ok")], tmp_path)
    assert report.metrics["tool_errors"] == 1
    assert report.metrics["tool_cancellations"] == 1
    failed = next(e for e in report.events if e.type == "tool.failed")
    assert failed.payload["kind"] == "cancelled"


def test_tool_messages_name_their_tool(tmp_path: Path) -> None:
    report, adapter = _run([lookup], [call_tools(("lookup", {"key": "a"})), reply("ok")], tmp_path)
    tool_messages = [m for m in report.messages if m.role == "tool"]
    assert [(m.name, m.content) for m in tool_messages] == [("lookup", "value of a")]
    sent = [m for m in adapter.calls[-1]["messages"] if m["role"] == "tool"]
    assert sent[0]["name"] == "lookup"


@pytest.mark.parametrize(
    ("call", "kind", "prompt", "event"),
    [
        (("wire", {"amount": 5, "to": "bob"}), "confirmation", "Confirm wire (5, bob)",
         "tool.confirmation_requested"),
        (("ask", {"question": "why"}), "user_input", "Input needed for ask (why)",
         "tool.user_input_requested"),
        (("transfer", {"agent_name": "billing"}), "handoff", "Hand off to billing", None),
        (("transfer", {}), "handoff", "Hand off to ?", None),
    ],
)  # fmt: skip
def test_a_pause_says_what_it_waits_for(
    tmp_path: Path, call: tuple[str, dict[str, Any]], kind: str, prompt: str, event: str | None
) -> None:
    report, _ = _run([wire, ask, transfer], [call_tools(call)], tmp_path)
    assert report.status == "paused" and report.pending_action is not None
    assert (report.pending_action.type, report.pending_action.prompt) == (kind, prompt)
    requested = [e for e in report.events if e.type.endswith("_requested")]
    if event is None:
        assert requested == []
    else:
        call_id = report.pending_action.tool_call.id
        assert [(e.type, e.source, e.payload) for e in requested] == [
            (event, call[0], {"tool_call_id": call_id})
        ]


def test_a_resume_keeps_the_results_of_calls_finished_before_the_pause(tmp_path: Path) -> None:
    turns = [
        call_tools(("lookup", {"key": "a"}), ("wire", {"amount": 5, "to": "bob"})),
        reply("ok"),
    ]
    desk, adapter = _desk(turns, tmp_path)
    worker = Worker(name="w", tools=[lookup, wire])
    paused = desk.run(worker, "go")
    assert paused.status == "paused"
    done = desk.resume(paused, "approve")
    assert (done.status, ran) == ("completed", ["lookup a", "wire 5 bob"])  # lookup ran once
    assert _answers(adapter) == ["value of a", "sent"]


def test_a_tool_result_answers_a_handoff_without_running_the_tool(tmp_path: Path) -> None:
    desk, adapter = _desk([call_tools(("transfer", {"agent_name": "x"})), reply("ok")], tmp_path)
    paused = desk.run(Worker(name="w", tools=[transfer]), "go")
    done = desk.resume(paused, ToolResult(content="no agent named x"))
    assert (done.status, ran) == ("completed", [])
    assert _answers(adapter) == ["no agent named x"]


def test_a_tool_result_does_not_answer_a_confirmation(tmp_path: Path) -> None:
    desk, _ = _desk([call_tools(("wire", {"amount": 1, "to": "al"})), reply("ok")], tmp_path)
    paused = desk.run(Worker(name="w", tools=[wire]), "go")
    with pytest.raises(ConfigurationError, match="not a ToolResult"):  # no True or False
        desk.resume(paused, ToolResult(content="pretend"))
    assert ran == [] and desk.resume(paused, True).status == "completed"
    assert ran == ["wire 1 al"]


def test_resuming_with_a_worker_that_lacks_the_pending_tool_fails_clearly(tmp_path: Path) -> None:
    desk, _ = _desk([call_tools(("wire", {"amount": 1, "to": "al"}))], tmp_path)
    paused = desk.run(Worker(name="w", tools=[wire]), "go")
    done = desk.resume(paused, "approve", runner=Worker(name="w", tools=[lookup]))
    assert done.status == "failed"
    assert "pending tool 'wire' is not available to worker 'w'" in " ".join(done.errors)
    assert ran == []


def test_max_tool_calls_counts_every_turn_and_allows_exactly_the_limit(tmp_path: Path) -> None:
    both = call_tools(("lookup", {"key": "a"}), ("lookup", {"key": "b"}))
    desk, _ = _desk([both, reply("ok")], tmp_path)
    desk.max_tool_calls = 2
    assert desk.run(Worker(name="w", tools=[lookup]), "go").status == "completed"
    one = call_tools(("lookup", {"key": "c"}))
    desk, _ = _desk([one, one, one, reply("ok")], tmp_path)
    desk.max_tool_calls = 2
    report = desk.run(Worker(name="w", tools=[lookup]), "go")
    assert report.status == "failed"
    assert "max_tool_calls exceeded (2)" in " ".join(report.errors)


@pytest.mark.parametrize(("size", "truncated"), [(200, False), (201, True)])
def test_a_long_result_is_previewed_and_marked_truncated(
    tmp_path: Path, size: int, truncated: bool
) -> None:
    @tool()
    def big() -> str:
        """Return a long text."""
        return "x" * size

    report, _ = _run([big], [call_tools(("big", {})), reply("ok")], tmp_path)
    done = next(e for e in report.events if e.type == "tool.completed")
    assert done.payload["result_truncated"] is truncated
    assert done.payload["result_preview"] == "x" * 200


def test_the_turn_is_on_disk_before_a_tool_runs(tmp_path: Path) -> None:
    """The store is flushed before every tool call (a tool may have effects a crash cannot
    undo), whether or not the store also flushes on its own."""
    db = tmp_path / "runs.db"
    seen: list[str] = []

    class CountingStore(SQLiteRunStore):
        flushes = 0

        def flush(self) -> None:
            CountingStore.flushes += 1
            super().flush()

    @tool()
    def peek() -> str:
        """Read what the store holds right now, as another process would."""
        seen.append(f"flushes={CountingStore.flushes}")
        conn = sqlite3.connect(db)
        seen.extend(row[0] for row in conn.execute("SELECT type FROM events ORDER BY seq"))
        conn.close()
        return "peeked"

    desk = Desk(model="scripted", adapter=ScriptedAdapter([call_tools(("peek", {})), reply("ok")]),
                run_store=CountingStore(db), storage_dir=tmp_path / ".deskwork")  # fmt: skip
    assert desk.run(Worker(name="w", tools=[peek]), "go").status == "completed"
    desk.run_store.close()
    assert seen[0] != "flushes=0"
    assert {"run.started", "llm.completed", "tool.started"} <= set(seen)


def test_a_cancelled_failure_event_says_cancelled(tmp_path: Path) -> None:
    @tool()
    def stop() -> ToolResult:
        """Report a cancelled call."""
        return ToolResult(error="stopped", cancelled=True)

    report, _ = _run([stop], [call_tools(("stop", {})), reply("ok")], tmp_path)
    failed = next(e for e in report.events if e.type == "tool.failed")
    assert (failed.payload["cancelled"], failed.payload["timed_out"]) == (True, False)


def test_the_report_of_a_resumed_run_holds_the_answered_call_result(tmp_path: Path) -> None:
    turns = [
        call_tools(("lookup", {"key": "a"}), ("wire", {"amount": 5, "to": "bob"})),
        reply("ok"),
    ]
    store = SQLiteRunStore(tmp_path / "runs.db")  # the state is read back from JSON
    desk = Desk(model="scripted", adapter=ScriptedAdapter(turns), run_store=store)
    paused = desk.run(Worker(name="w", tools=[lookup, wire]), "go")
    done = desk.resume(paused.run_id, "approve")
    results = [(c.name, c.result.content if c.result else None) for c in done.tool_calls]
    assert results == [("lookup", "value of a"), ("wire", "sent")]
    record = desk.run_store.get_run(done.run_id)
    assert record is not None and record.state is not None
    assert [c.result.content if c.result else None for c in record.state.tool_calls] == [
        "value of a",
        "sent",
    ]
