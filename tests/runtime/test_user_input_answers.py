"""``@tool(requires_user_input=True)``: the person's answer reaches the tool's input-key
parameter; a tool without one (the seed's ``ask(question)``) gets the answer as its result."""

from __future__ import annotations

from typing import Any

from deskwork import Desk, Job, Worker
from deskwork.core.event import EventType
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool
from deskwork.tools import Tool, tool


def _tool_texts(messages: list[dict[str, Any]], tools: Any) -> str:
    return " | ".join(str(m["content"]) for m in messages if m["role"] == "tool")


def _ask_and_answer(ask: Tool, answer: str) -> tuple[Desk, Any]:
    desk = Desk(
        model="scripted/model",
        adapter=ScriptedAdapter([call_tool("ask", question="Which city?"), _tool_texts]),
        run_store=InMemoryRunStore(),
        storage_dir=".deskwork-unused",
    )
    paused = desk.run(Worker(name="w", tools=[ask]), Job(input="plan a trip"))
    assert paused.status == "paused" and paused.pending_action is not None
    assert paused.pending_action.type == "user_input"
    return desk, desk.resume(paused, answer)


def test_the_answer_is_the_result_of_a_tool_without_a_parameter_for_it() -> None:
    called: list[str] = []

    @tool(requires_user_input=True)
    def ask(question: str) -> str:
        called.append(question)
        return "never"

    desk, report = _ask_and_answer(ask, "Lisbon")
    # was: failed call "invalid arguments for tool 'ask': user_input: Extra inputs are not
    # permitted", on every resume
    assert report.status == "completed" and report.content == "Lisbon"
    assert called == []
    (call,) = report.tool_calls
    assert call.result is not None and call.result.error is None
    assert call.result.content == "Lisbon"
    events = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert EventType.TOOL_COMPLETED in events and EventType.TOOL_FAILED not in events


def test_a_tool_with_the_parameter_is_called_with_the_answer() -> None:
    @tool(requires_user_input=True)
    def ask(question: str, user_input: str) -> str:
        return f"{question} -> {user_input}"

    _, report = _ask_and_answer(ask, "Lisbon")
    assert report.status == "completed" and report.content == "Which city? -> Lisbon"
