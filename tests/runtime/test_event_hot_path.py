"""The desk's fast event construction (issue 13) gives the same events as validation."""

from __future__ import annotations

from deskwork import Desk, Event, Job, Worker
from deskwork.core.event import new_event
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def test_an_event_built_without_validation_equals_a_validated_one() -> None:
    fast = new_event("r1", "tool.completed", "add", {"a": [1, {"b": "c"}]})
    values = (fast.event_id, "tool.completed", fast.timestamp, "r1", "add", {"a": [1, {"b": "c"}]})
    checked = Event(**dict(zip(Event.model_fields, values, strict=True)))
    assert fast == checked
    assert fast.model_fields_set == checked.model_fields_set
    assert fast.model_dump_json() == checked.model_dump_json()
    assert fast.model_copy(update={"source": "x"}).source == "x"


def test_events_of_a_run_are_redacted_and_stored_as_emitted() -> None:
    @tool()
    def login(password: str) -> str:
        """Log in."""
        return "token sk-abcdefghijklmnop"

    store = InMemoryRunStore()
    adapter = ScriptedAdapter([call_tool("login", password="hunter2"), reply("done")])
    seen: list[Event] = []
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    report = desk.run(Worker(name="w", tools=[login]), Job(input="go"), on_event=seen.append)
    assert report.status == "completed"
    stored = store.get_events(report.run_id)
    assert (
        [e.model_dump() for e in stored]
        == [e.model_dump() for e in seen]
        == [e.model_dump() for e in report.events]
    )
    text = "".join(e.model_dump_json() for e in stored)
    assert "hunter2" not in text and "sk-abcdefghijklmnop" not in text
    assert all(Event.model_validate(e.model_dump()) == e for e in seen)
