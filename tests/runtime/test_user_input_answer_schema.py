"""A ``user_input`` answer of the wrong type is refused before the pause is claimed: the run
stays paused and the person can answer again. The pause was used up: the tool's call failed
on the answer ("invalid arguments") and no second answer was possible. The pending action
stores what the answer must look like (``answer_schema``), so any process can check it; one
stored without it (an earlier version) resumes as before."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Job, Report, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool
from deskwork.tools import Tool, tool


class Address(BaseModel):
    city: str
    zip_code: int


def _tool_texts(messages: list[dict[str, Any]], tools: Any) -> str:
    return " | ".join(str(m["content"]) for m in messages if m["role"] == "tool")


def _paused(ask: Tool) -> tuple[Desk, Report]:
    desk = Desk(
        model="scripted/model",
        adapter=ScriptedAdapter([call_tool(ask.name, question="How many?"), _tool_texts]),
        run_store=InMemoryRunStore(),
        storage_dir=".deskwork-unused",
    )
    paused = desk.run(Worker(name="w", tools=[ask]), Job(input="count"))
    assert paused.status == "paused" and paused.pending_action is not None
    return desk, paused


def _stays_paused(desk: Desk, run_id: str) -> None:
    record = desk.run_store.get_run(run_id)
    assert record is not None and record.status == "paused"
    assert "run.resumed" not in [e.type for e in desk.run_store.get_events(run_id)]


def test_an_answer_of_the_wrong_type_leaves_the_run_paused() -> None:
    calls: list[int] = []

    @tool(requires_user_input=True)
    def count(question: str, user_input: int) -> str:
        calls.append(user_input)
        return f"{question} {user_input}"

    desk, paused = _paused(count)
    assert paused.pending_action is not None
    assert paused.pending_action.answer_schema == {"title": "User Input", "type": "integer"}
    with pytest.raises(ConfigurationError, match=r"'many' is not of type 'integer'.*stays paused"):
        desk.resume(paused, "many")
    _stays_paused(desk, paused.run_id)
    report = desk.resume(paused, "3")  # a text Pydantic reads as a number is taken
    assert report.status == "completed" and report.content == "How many? 3"
    assert calls == [3]


def test_a_model_answer_is_checked_field_by_field() -> None:
    @tool(requires_user_input=True)
    def where(question: str, user_input: Address) -> str:
        return f"{user_input.city} {user_input.zip_code}"

    desk, paused = _paused(where)
    with pytest.raises(ConfigurationError, match="'zip_code' is a required property"):
        desk.resume(paused, {"city": "Lisbon"})
    with pytest.raises(ConfigurationError, match="zip_code: 'x' is not of type 'integer'"):
        desk.resume(paused, {"city": "Lisbon", "zip_code": "x"})
    _stays_paused(desk, paused.run_id)
    report = desk.resume(paused, Address(city="Lisbon", zip_code=1100))
    assert report.content == "Lisbon 1100"


def test_an_answer_that_is_the_result_is_checked_against_the_output_type() -> None:
    @tool(requires_user_input=True, output_type=list[int])
    def pick(question: str) -> list[int]:
        return []

    desk, paused = _paused(pick)
    with pytest.raises(ConfigurationError, match="is not of type 'array'"):
        desk.resume(paused, "one")
    assert desk.resume(paused, (1, 2)).content == "[1, 2]"


def test_a_pause_stored_without_a_schema_resumes_as_before() -> None:
    @tool(requires_user_input=True)
    def count(question: str, user_input: int) -> str:
        return "never"

    desk, paused = _paused(count)
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    action = record.state.pending_action
    assert action is not None
    old = record.state.model_copy(
        update={"pending_action": action.model_copy(update={"answer_schema": None})}
    )
    desk.run_store.update_run(paused.run_id, "paused", record.output, record.output_json, old)
    desk._live_states.clear()  # resumed as another process would: from the stored state
    report = desk.resume(paused.run_id, "many")
    assert report.status == "completed"
    (call,) = report.tool_calls
    assert call.result is not None and "invalid arguments" in (call.result.error or "")


def test_none_still_declines() -> None:
    @tool(requires_user_input=True)
    def count(question: str, user_input: int) -> str:
        return "never"

    desk, paused = _paused(count)
    report = desk.resume(paused, None)
    assert report.content == "Error: Tool execution declined"
