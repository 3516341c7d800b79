"""Resuming a paused run leaves the paused report and the stored record already read as they
were: the resumed run counts its model calls in metrics of its own (a SQL store's record is a
fresh copy on every read; the in-memory store's must not change under the caller either)."""

from __future__ import annotations

import copy

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool(requires_confirmation=True)
def send(to: str) -> str:
    """Send a message (needs a person's approval)."""
    return f"sent to {to}"


def test_a_resumed_run_leaves_the_paused_reports_metrics_as_they_were() -> None:
    store = InMemoryRunStore()
    adapter = ScriptedAdapter([call_tool("send", to="x"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    paused = desk.run(Worker(name="w", tools=[send]), Job(input="go"))
    assert paused.status == "paused"
    record = store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    report_metrics = copy.deepcopy(paused.metrics)
    stored_metrics = copy.deepcopy(record.state.metrics)
    assert stored_metrics["by_model"]["scripted/m"]["llm_calls"] == 1

    resumed = desk.resume(paused, "yes")

    assert resumed.status == "completed"
    assert resumed.metrics["llm_calls"] == 2
    assert resumed.metrics["by_model"]["scripted/m"]["llm_calls"] == 2
    assert paused.metrics == report_metrics
    assert record.state.metrics == stored_metrics


def test_a_resumed_run_leaves_the_paused_reports_tool_calls_and_messages_as_they_were() -> None:
    store = InMemoryRunStore()
    adapter = ScriptedAdapter([call_tool("send", to="x"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    paused = desk.run(Worker(name="w", tools=[send]), Job(input="go"))
    record = store.get_run(paused.run_id)
    assert record is not None and record.state is not None

    def seen() -> list[str]:
        assert record is not None and record.state is not None
        parts = [*paused.tool_calls, *paused.messages, *record.state.tool_calls]
        return [p.model_dump_json() for p in [*parts, *record.state.messages]]

    before = seen()
    resumed = desk.resume(paused, "yes")

    assert resumed.status == "completed"
    assert resumed.tool_calls[0].result is not None
    assert resumed.tool_calls[0].result.content == "sent to x"
    # the resumed run's assistant message holds the call with its result, as a run does
    assistant = next(m for m in resumed.messages if m.tool_calls)
    assert assistant.tool_calls is not None and assistant.tool_calls[0] is resumed.tool_calls[0]
    assert paused.tool_calls[0].result is None
    assert seen() == before
