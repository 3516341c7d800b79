"""The store contract: every run, session and memory store backend passes these tests.

The ``run_store``, ``session_store`` and ``memory_store`` fixtures (``conftest.py``) run each
test against the in-memory, SQLite and PostgreSQL backends.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from storekit import paused_state, sample_event

from deskwork import Event, Message, ToolCall
from deskwork.memory import MemoryStore
from deskwork.store import (
    RunNotRunningError,
    RunStore,
    SessionStore,
    SQLiteRunStore,
    StoreError,
)
from deskwork.store._blobs import MAX_STORED_CHARS
from deskwork.utils import new_id, utc_now

# --------------------------------------------------------------------------- run stores


def test_run_round_trip(run_store: RunStore) -> None:
    run_store.create_run("r1", {"input": "hi", "list": [1, 2]})
    record = run_store.get_run("r1")
    assert record is not None and record.status == "running" and record.state is None
    assert record.input == {"input": "hi", "list": [1, 2]}
    assert record.created_at.tzinfo is not None
    state = paused_state("r1")
    run_store.update_run("r1", "paused", "partial", {"data": [1, "two"]}, state)
    record = run_store.get_run("r1")
    assert record is not None
    assert (record.status, record.output, record.output_json) == (
        "paused",
        "partial",
        {"data": [1, "two"]},
    )
    assert record.state == state
    assert record.updated_at >= record.created_at
    assert run_store.get_run("missing") is None
    with pytest.raises(KeyError):
        run_store.update_run("missing", "failed", None, None, None)


def test_run_records_its_runner_and_owner_process(run_store: RunStore) -> None:
    run_store.begin_run("r", None, runner="analyst")  # what the desk calls
    record = run_store.get_run("r")
    assert record is not None and record.runner == "analyst"
    assert record.owner is not None and record.owner.pid == os.getpid()
    run_store.update_run("r", "paused", None, None, paused_state("r"))
    assert run_store.claim_paused("r")
    claimed = run_store.get_run("r")
    assert claimed is not None and claimed.owner == record.owner and claimed.runner == "analyst"


def test_events_keep_insertion_order_per_run(run_store: RunStore) -> None:
    run_store.create_run("a", None)
    run_store.create_run("b", None)
    written = []
    for n in range(30):
        event = sample_event("a" if n % 3 else "b", n)
        written.append(event)
        run_store.add_event(event)
    got = run_store.get_events("a")
    assert [e.event_id for e in got] == [e.event_id for e in written if e.run_id == "a"]
    assert got[0].payload == written[1].payload and got[0].timestamp == written[1].timestamp
    assert run_store.get_events("nobody") == []


def _end_event(run_id: str, payload: dict[str, Any] | None = None) -> Event:
    return Event(
        event_id=new_id(),
        type="run.completed",
        timestamp=utc_now(),
        run_id=run_id,
        source="s",
        payload=payload or {},
    )


def test_finish_run_stores_the_record_with_its_end_event_after_the_others(
    run_store: RunStore,
) -> None:
    async def run() -> list[Event]:  # events added in a loop wait for the next commit
        run_store.begin_run("r", None, runner="w")
        steps = [sample_event("r", n) for n in range(3)]
        for event in steps:
            run_store.add_event(event)
        end = _end_event("r")
        run_store.finish_run("r", "completed", "done", {"k": [1]}, None, end)
        return [*steps, end]

    written = asyncio.run(run())
    record = run_store.get_run("r")
    assert record is not None
    assert (record.status, record.output, record.output_json) == ("completed", "done", {"k": [1]})
    assert [e.event_id for e in run_store.get_events("r")] == [e.event_id for e in written]


def test_finish_run_of_an_unknown_run_stores_no_event(run_store: RunStore) -> None:
    with pytest.raises(KeyError):
        run_store.finish_run("missing", "completed", None, None, None, _end_event("missing"))
    assert run_store.get_events("missing") == []


def test_a_refused_end_event_leaves_the_record_running(run_store: RunStore) -> None:
    run_store.create_run("r", None)
    huge = {"errors": ["x" * (MAX_STORED_CHARS + 1)]}
    with pytest.raises(StoreError, match="larger than a run store keeps"):
        run_store.finish_run("r", "failed", None, None, None, _end_event("r", huge))
    record = run_store.get_run("r")
    assert record is not None and record.status == "running"
    assert run_store.get_events("r") == []


def _ended(run_store: RunStore, run_id: str, status: str) -> list[str]:
    """``run_id`` begun, given one event, then ended ``status``; its events' ids."""
    run_store.create_run(run_id, None)
    first = sample_event(run_id, 0)
    run_store.add_event(first)
    state = paused_state(run_id) if status == "paused" else None
    end = _end_event(run_id).model_copy(update={"type": f"run.{status}"})
    run_store.finish_run(run_id, status, "out", None, state, end)  # type: ignore[arg-type]
    return [first.event_id, end.event_id]


@pytest.mark.parametrize("status", ["completed", "failed", "paused"])
def test_an_event_of_a_run_that_is_not_running_is_refused(run_store: RunStore, status: str) -> None:
    kept = _ended(run_store, "r", status)
    with pytest.raises(RunNotRunningError):
        run_store.add_event(sample_event("r", 1))
    other_end = "run.failed" if status != "failed" else "run.completed"
    with pytest.raises(RunNotRunningError):  # an end event of another status too
        run_store.add_event(sample_event("r", 2).model_copy(update={"type": other_end}))
    assert [e.event_id for e in run_store.get_events("r")] == kept
    run_store.add_event(sample_event("nobody", 0))  # a run with no record: a log of events alone
    assert len(run_store.get_events("nobody")) == 1


def test_a_record_ended_without_its_end_event_takes_that_end_alone(run_store: RunStore) -> None:
    run_store.create_run("r", None)
    run_store.update_run("r", "completed", "done", None, None)  # a store failed between
    end = _end_event("r")
    run_store.add_event(end)
    assert [e.event_id for e in run_store.get_events("r")] == [end.event_id]


def test_finish_run_ends_only_a_running_or_paused_run(run_store: RunStore) -> None:
    _ended(run_store, "done", "completed")
    late = _end_event("done").model_copy(update={"type": "run.failed"})
    with pytest.raises(RunNotRunningError):  # a cancel that comes too late
        run_store.finish_run("done", "failed", None, None, None, late)
    record = run_store.get_run("done")
    assert record is not None and (record.status, record.output) == ("completed", "out")
    assert len(run_store.get_events("done")) == 2
    _ended(run_store, "held", "paused")
    cancel = _end_event("held").model_copy(update={"type": "run.failed"})
    run_store.finish_run("held", "failed", None, None, None, cancel)  # a paused run's cancel
    record = run_store.get_run("held")
    assert record is not None and record.status == "failed"
    assert run_store.get_events("held")[-1].event_id == cancel.event_id


def test_events_committed_after_the_run_ended_elsewhere_are_dropped_and_the_next_refused(
    run_store: RunStore, tmp_path: Any
) -> None:
    """A run ended by another process (a cancel) while this one still runs it: its events
    added in a loop (committed later) are not stored, and its next write raises."""
    other = _same_database(run_store)
    try:
        run_store.begin_run("r", None, runner="w")
        run_store.add_event(sample_event("r", 0))
        run_store.flush()
        cancel = _end_event("r").model_copy(update={"type": "run.failed"})
        other.finish_run("r", "failed", None, None, None, cancel)

        async def go_on() -> int:
            added = 0
            with pytest.raises(RunNotRunningError):
                for n in range(1, 4):
                    run_store.add_event(sample_event("r", n))  # the in-memory store refuses now
                    added += 1
                    await asyncio.to_thread(run_store.flush)  # the others commit then
            return added

        assert asyncio.run(go_on()) <= 1  # stopped at the event after the refused one
        with pytest.raises(RunNotRunningError):
            run_store.finish_run("r", "completed", "late", None, None, _end_event("r"))
        types = [e.type for e in run_store.get_events("r")]
        assert types == ["custom.0", "run.failed"]
        record = run_store.get_run("r")
        assert record is not None and record.status == "failed"
    finally:
        if other is not run_store:
            other.close()


def _same_database(run_store: RunStore) -> RunStore:
    """Another store on ``run_store``'s database (the in-memory store: itself)."""
    if isinstance(run_store, SQLiteRunStore):
        return SQLiteRunStore(run_store.path)
    if type(run_store).__name__ == "PostgresRunStore":
        from deskwork.store.postgres import PostgresRunStore

        assert isinstance(run_store, PostgresRunStore)
        return PostgresRunStore(run_store.database.url)
    return run_store


def test_list_runs_most_recent_first_with_limit(run_store: RunStore) -> None:
    for run_id in ("one", "two", "three"):
        run_store.create_run(run_id, None)
        time.sleep(0.002)
    run_store.update_run("one", "completed", "x", None, None)
    runs = run_store.list_runs()
    assert [r.run_id for r in runs] == ["one", "three", "two"]
    assert [r.run_id for r in run_store.list_runs(limit=2)] == ["one", "three"]


def test_list_runs_filters_by_status_runner_and_time(run_store: RunStore) -> None:
    run_store.begin_run("a", None, runner="alpha")
    run_store.begin_run("b", None, runner="beta")
    run_store.begin_run("c", None, runner="alpha")
    run_store.update_run("a", "completed", "x", None, None)
    assert [r.run_id for r in run_store.list_runs(status="completed")] == ["a"]
    assert sorted(r.run_id for r in run_store.list_runs(runner="alpha")) == ["a", "c"]
    assert [r.run_id for r in run_store.list_runs(status="running", runner="alpha")] == ["c"]
    assert run_store.list_runs(since=utc_now() + timedelta(seconds=5)) == []
    assert len(run_store.list_runs(since=utc_now() - timedelta(minutes=1))) == 3


def test_claim_paused_only_once(run_store: RunStore) -> None:
    run_store.create_run("r", None)
    assert not run_store.claim_paused("r")  # running, not paused
    run_store.update_run("r", "paused", None, None, paused_state("r"))
    assert run_store.claim_paused("r")
    assert not run_store.claim_paused("r")
    record = run_store.get_run("r")
    assert record is not None and record.status == "running" and record.state is not None
    assert not run_store.claim_paused("missing")


def test_claim_paused_is_atomic_across_threads(run_store: RunStore) -> None:
    run_store.create_run("r", None)
    run_store.update_run("r", "paused", None, None, paused_state("r"))
    wins: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        wins.append(run_store.claim_paused("r"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_checkpoint_items_by_thread_prefix_and_order(run_store: RunStore) -> None:
    run_store.put_checkpoint_items("t", [("b.2", b"two"), ("a.1", b"one"), ("b.10", b"ten")])
    run_store.put_checkpoint_items("other", [("b.1", b"x")])
    assert run_store.get_checkpoint_items("t") == [
        ("a.1", b"one"),
        ("b.10", b"ten"),
        ("b.2", b"two"),
    ]
    assert run_store.get_checkpoint_items("t", "b.", newest_first=True, limit=1) == [
        ("b.2", b"two")
    ]
    run_store.put_checkpoint_items("t", [("a.1", b"new")], overwrite=False)
    assert run_store.get_checkpoint_items("t", "a.") == [("a.1", b"one")]
    run_store.put_checkpoint_items("t", [("a.1", b"new")])
    assert run_store.get_checkpoint_items("t", "a.") == [("a.1", b"new")]
    run_store.delete_checkpoint_items("t")
    assert run_store.get_checkpoint_items("t") == []
    assert run_store.get_checkpoint_items("other") == [("b.1", b"x")]


# --------------------------------------------------------------------------- session stores


def test_session_store_round_trip(session_store: SessionStore) -> None:
    record = session_store.create_session("s1", "Assistant", {"user_id": "123"})
    assert (record.id, record.worker_name, record.metadata) == (
        "s1",
        "Assistant",
        {"user_id": "123"},
    )
    got = session_store.get_session("s1")
    assert got is not None and got.metadata == {"user_id": "123"}
    messages = [
        Message(role="user", content="hi"),
        Message(
            role="assistant",
            content=None,
            tool_calls=[ToolCall(id="c", name="t", arguments={"a": 1})],
        ),
        Message(role="tool", content="r", tool_call_id="c", name="t"),
    ]
    session_store.replace_messages("s1", messages)
    assert session_store.get_messages("s1") == messages
    session_store.replace_messages("s1", messages[:1])
    assert session_store.get_messages("s1") == messages[:1]
    session_store.delete_session("s1")
    assert session_store.get_session("s1") is None and session_store.get_messages("s1") == []


def test_session_ids_are_unique_and_unknown_sessions_raise(session_store: SessionStore) -> None:
    session_store.create_session("s2", "w", {})
    with pytest.raises(ValueError, match="already exists"):
        session_store.create_session("s2", "w", {})
    with pytest.raises(KeyError):
        session_store.replace_messages("nobody", [Message(role="user", content="x")])
    assert session_store.get_messages("nobody") == []


# --------------------------------------------------------------------------- memory stores


def test_write_read_overwrite_and_scopes(memory_store: MemoryStore) -> None:
    memory_store.write("k", {"a": [1, 2]}, "worker:Analyst")
    memory_store.write("k", "other scope", "desk")
    assert memory_store.read("k", "worker:Analyst") == {"a": [1, 2]}
    assert memory_store.read("k", "desk") == "other scope"
    assert memory_store.read("missing", "desk") is None
    memory_store.write("k", 3, "desk")
    assert memory_store.read("k", "desk") == 3


def test_values_are_copies(memory_store: MemoryStore) -> None:
    value: dict[str, Any] = {"items": [1]}
    memory_store.write("k", value, "s")
    value["items"].append(2)
    read = memory_store.read("k", "s")
    assert read == {"items": [1]}
    read["items"].append(3)
    assert memory_store.read("k", "s") == {"items": [1]}


def test_search_matches_key_or_value_substrings(memory_store: MemoryStore) -> None:
    memory_store.write("doc1", "AI is transforming healthcare", "global")
    memory_store.write("doc2", "Machine learning predicts outcomes", "global")
    memory_store.write("notes", {"topic": "Healthcare costs"}, "global")
    memory_store.write("doc3", "healthcare elsewhere", "other")
    assert sorted(k for k, _ in memory_store.search("healthcare", "global")) == ["doc1", "notes"]
    assert [k for k, _ in memory_store.search("doc2", "global")] == ["doc2"]
    assert dict(memory_store.search("predicts", "global")) == {
        "doc2": "Machine learning predicts outcomes"
    }
    assert memory_store.search("nothing-like-this", "global") == []


def test_search_finds_non_ascii_and_literal_wildcards(memory_store: MemoryStore) -> None:
    memory_store.write("café", "crème brûlée", "s")
    memory_store.write("plain", "abc", "s")
    memory_store.write("pct", "100% done", "s")
    assert [k for k, _ in memory_store.search("brûlée", "s")] == ["café"]
    assert [k for k, _ in memory_store.search("café", "s")] == ["café"]
    assert memory_store.search("a_c", "s") == []  # "_" is not a wildcard
    assert [k for k, _ in memory_store.search("0% d", "s")] == ["pct"]
    assert memory_store.search("%", "s") == [("pct", "100% done")]


def test_reset_clears_one_scope(memory_store: MemoryStore) -> None:
    memory_store.write("a", 1, "s1")
    memory_store.write("b", 2, "s2")
    memory_store.reset("s1")
    assert memory_store.read("a", "s1") is None and memory_store.read("b", "s2") == 2


def test_reserve_run_records_a_new_id_once(run_store: RunStore) -> None:
    assert run_store.reserve_run("key-1", {"input": "first"}, runner="w") is True
    assert run_store.reserve_run("key-1", {"input": "second"}, runner="w") is False
    record = run_store.get_run("key-1")
    assert record is not None and record.status == "running"
    assert record.input == {"input": "first"}  # the loser changed nothing
    run_store.update_run("key-1", "completed", "done", None, None)
    assert run_store.reserve_run("key-1", {"input": "third"}) is False
    assert run_store.get_run("key-1").status == "completed"  # type: ignore[union-attr]
