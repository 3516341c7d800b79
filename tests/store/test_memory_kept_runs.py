"""InMemoryRunStore keeps finished runs compactly (issue 13) and gives them back unchanged."""

from __future__ import annotations

import gc
import math
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.message import Message
from deskwork.core.state import RunRecord, RunState
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.store import InMemoryRunStore, RunNotRunningError
from deskwork.store._owner import current_owner
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


class Color(StrEnum):
    RED = "red"


def _state(run_id: str, *, data: Any = 5, metrics: Any = None) -> RunState:
    call = ToolCall(
        id="c1", name="add", arguments={"a": 2}, result=ToolResult(content="5", data=data)
    )
    return RunState(
        run_id=run_id,
        status="completed",
        runner_type="worker",
        runner_name="w",
        job={"input": "add", "metadata": {"k": [1, 2.5, None, True]}},
        messages=[
            Message(role="user", content="add é 😀 \x00"),
            Message(role="assistant", tool_calls=[call], metadata={"deskwork": "x"}),
            Message(role="tool", content=[{"type": "text", "text": "5"}], tool_call_id="c1"),
        ],
        tool_calls=[call],
        metrics=metrics if metrics is not None else {"cost": 0.1, "by_model": {"m": {"n": 1}}},
        iteration=2,
        payload={"model": "m"},
    )


def _finished(store: InMemoryRunStore, run_id: str, **values: Any) -> RunRecord:
    """Store a finished run; its record as the store had it before keeping it."""
    store.create_run(run_id, values.get("input", {"input": "x"}), runner="w")
    output_json = values.get("output_json", {"answer": 5})
    state = values.get("state", _state(run_id))
    store.update_run(run_id, values.get("status", "completed"), "out", output_json, state)
    record = store.get_run(run_id)
    assert record is not None
    return record


def test_a_finished_run_reads_back_with_the_values_it_was_given() -> None:
    store = InMemoryRunStore()
    state = _state("r1")
    output_json = {"big": 10**30, "tiny": 5e-324, "neg": -0.0, "f": 0.1, "s": "é\x00😀"}
    record = _finished(store, "r1", output_json=output_json, state=state)
    assert record.state == state and record.output_json == output_json
    assert math.copysign(1.0, record.output_json["neg"]) == -1.0
    assert type(record.output_json["big"]) is int and record.output_json["tiny"] == 5e-324
    assert record.input == {"input": "x"} and record.output == "out"
    assert record.status == "completed" and record.runner == "w"
    assert record.owner == current_owner()
    assert record.created_at <= record.updated_at and record.updated_at.tzinfo is not None
    assert record.model_fields_set == set(RunRecord.model_fields)
    assert store.get_run("r1") == record
    assert store.list_runs() == [record.model_copy(update={"state": None})]


def test_values_json_would_change_come_back_as_they_were() -> None:
    store = InMemoryRunStore()
    exc = ValueError("boom")
    odd: list[tuple[str, dict[str, Any]]] = [
        ("tuple", {"output_json": {"t": (1, 2)}}),
        ("nan", {"state": _state("nan", metrics={"cost": math.nan})}),
        ("datetime", {"state": _state("datetime", data=datetime(2026, 1, 1, tzinfo=UTC))}),
        ("model", {"input": {"job": Message(role="user", content="hi")}}),
        ("int key", {"input": {1: "one"}}),
        ("enum", {"output_json": [Color.RED]}),
        ("surrogate", {"output_json": "\ud800"}),
    ]
    for run_id, values in odd:
        _finished(store, run_id, **values)
        record = store.get_run(run_id)
        assert record is not None
        for name, value in values.items():
            kept = getattr(record, name)
            assert kept is value or kept == value, run_id
    state = _state("exc")
    assert state.tool_calls[0].result is not None
    state.tool_calls[0].result.original_exception = exc  # left out of a state's JSON
    _finished(store, "exc", state=state)
    kept = store.get_run("exc")
    assert kept is not None and kept.state is not None
    result = kept.state.tool_calls[0].result
    assert result is not None and result.original_exception is exc
    assert store.get_run("nan") is not None


def test_the_finished_runs_updated_longest_ago_are_dropped_first() -> None:
    store = InMemoryRunStore(max_runs=3)
    for run_id in ("a", "b", "c"):
        store.create_run(run_id, None)
    for run_id in ("b", "a", "c"):  # finished in another order than created
        store.update_run(run_id, "completed", None, None, None)
    store.update_run("b", "failed", "again", None, None)  # b: the newest update now
    store.create_run("d", None)  # 4 > 3: a (updated longest ago) goes
    assert [r.run_id for r in store.list_runs()] == ["d", "b", "c"]
    assert store.get_run("b") is not None and store.get_run("b").output == "again"  # type: ignore[union-attr]
    store.update_run("c", "paused", None, None, None)  # unfinished again: never dropped
    store.create_run("e", None)
    assert {r.run_id for r in store.list_runs()} == {"c", "d", "e"}


def test_an_event_added_after_a_runs_end_is_refused_and_its_events_kept() -> None:
    store = InMemoryRunStore()
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("ok")]), run_store=store)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    end = report.events[-1]
    late = end.model_copy(update={"event_id": "late", "type": "custom"})
    with pytest.raises(RunNotRunningError):
        store.add_event(late)
    assert store.get_events(report.run_id) == report.events


def test_kept_runs_add_no_work_for_the_garbage_collector() -> None:
    @tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def cycle(messages: list[dict[str, Any]], _tools: Any) -> Any:
        return reply("5") if messages[-1]["role"] == "tool" else call_tool("add", a=2, b=3)

    adapter = ScriptedAdapter(default=cycle)
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    worker = Worker(name="w", tools=[add])
    for _ in range(50):
        desk.run(worker, Job(input="add 2 and 3"))

    def added_by_300_runs() -> int:
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(300):
            assert desk.run(worker, Job(input="add 2 and 3")).status == "completed"
            adapter.calls.clear()  # the adapter's own record of its calls
        gc.collect()
        return len(gc.get_objects()) - before

    # a kept run was ~30 tracked objects (its record, state, messages, tool calls, ...): 300
    # runs added ~9,000. The count is the whole process's, so a thread another test left
    # behind (a pool thread exiting, a driver's) can add its own objects to one window: the
    # first of three windows under the bound passes.
    assert any(added_by_300_runs() < 300 for _ in range(3))
