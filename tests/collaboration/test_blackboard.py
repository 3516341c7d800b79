"""Tests for deskwork.collaboration.Blackboard."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork.collaboration import Blackboard, BlackboardEntry


class Score(BaseModel):
    name: str
    score: int


class Recorder:
    """A subscriber that records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str]] = []

    def __call__(self, key: str, value: Any, author: str) -> None:
        self.calls.append((key, value, author))


def _entry(board: Blackboard, key: str) -> BlackboardEntry:
    entry = board.read_entry(key)
    assert entry is not None
    return entry


# --------------------------------------------------------------------------- basics


def test_write_then_read_returns_value() -> None:
    board = Blackboard()
    board.write("analysis_result", {"score": 95}, author="analyst")
    assert board.read("analysis_result") == {"score": 95}


def test_read_missing_key_returns_default() -> None:
    board = Blackboard()
    assert board.read("nope") is None
    assert board.read("nope", default=7) == 7


def test_write_returns_entry_with_metadata() -> None:
    board = Blackboard()
    entry = board.write("k", [1, 2], author="a")
    assert isinstance(entry, BlackboardEntry)
    assert (entry.key, entry.value, entry.author, entry.version) == ("k", [1, 2], "a", 1)
    assert entry.created_at == entry.updated_at
    assert entry.created_at.tzinfo is not None


def test_rewrite_keeps_created_at_and_bumps_version() -> None:
    board = Blackboard()
    first = board.write("k", 1, author="a")
    time.sleep(0.001)
    second = board.write("k", 2, author="b")
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert (second.value, second.author, second.version) == (2, "b", 2)
    assert board.read_entry("k") == second


def test_read_entry_missing_is_none() -> None:
    assert Blackboard().read_entry("k") is None


def test_exists_delete_keys_and_len() -> None:
    board = Blackboard()
    board.write("b", 1, author="x")
    board.write("a", 2, author="x")
    assert board.exists("a")
    assert "a" in board
    assert len(board) == 2
    assert board.keys() == ["b", "a"]
    assert board.delete("b") is True
    assert board.delete("b") is False
    assert not board.exists("b")
    assert board.keys() == ["a"]


def test_write_after_delete_starts_a_new_entry() -> None:
    board = Blackboard()
    board.write("k", 1, author="x")
    board.write("k", 2, author="x")
    board.delete("k")
    assert board.write("k", 3, author="y").version == 1


def test_all_entries_and_snapshot() -> None:
    board = Blackboard()
    board.write("a", 1, author="x")
    board.write("b", {"c": [1]}, author="y")
    entries = board.all_entries()
    assert list(entries) == ["a", "b"]
    assert entries["b"].author == "y"
    assert entries["b"].value == {"c": [1]}
    assert board.snapshot() == {"a": 1, "b": {"c": [1]}}


def test_clear_removes_every_entry() -> None:
    board = Blackboard()
    board.write("a", 1, author="x")
    board.write("b", 2, author="x")
    board.clear()
    assert board.keys() == []
    assert board.snapshot() == {}


def test_repr_lists_keys() -> None:
    board = Blackboard()
    board.write("a", 1, author="x")
    assert repr(board) == "Blackboard(keys=['a'])"


# ------------------------------------------------------------------- JSON values


def test_pydantic_model_is_stored_as_json() -> None:
    board = Blackboard()
    board.write("m", Score(name="a", score=3), author="x")
    board.write("nested", {"items": [Score(name="b", score=4)]}, author="x")
    assert board.read("m") == {"name": "a", "score": 3}
    assert board.read("nested") == {"items": [{"name": "b", "score": 4}]}


def test_values_are_stored_in_json_form() -> None:
    board = Blackboard()
    board.write("t", {"pair": (1, 2), 3: "int key"}, author="x")
    assert board.read("t") == {"pair": [1, 2], "3": "int key"}


@pytest.mark.parametrize("value", [{1, 2}, object(), {"when": time}, b"bytes"])
def test_non_json_value_is_rejected_naming_the_key(value: Any) -> None:
    board = Blackboard()
    board.write("plan", "old", author="x")
    with pytest.raises(TypeError, match="'plan'"):
        board.write("plan", value, author="x")
    assert board.read("plan") == "old"


def test_circular_value_is_rejected() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(TypeError, match="'loop'"):
        Blackboard().write("loop", loop, author="x")


def test_caller_mutation_of_written_value_does_not_change_board() -> None:
    board = Blackboard()
    value: dict[str, Any] = {"items": [1, 2]}
    board.write("k", value, author="x")
    value["items"].append(3)
    value["new"] = True
    assert board.read("k") == {"items": [1, 2]}


def test_mutating_read_results_does_not_change_board() -> None:
    board = Blackboard()
    board.write("k", {"items": [1]}, author="x")
    board.read("k")["items"].append(2)
    entry = board.read_entry("k")
    assert entry is not None
    entry.value["items"].append(3)
    board.all_entries()["k"].value["items"].append(4)
    board.snapshot()["k"]["items"].append(5)
    assert board.read("k") == {"items": [1]}


def test_returned_entry_is_a_frozen_snapshot() -> None:
    board = Blackboard()
    entry = board.write("k", 1, author="x")
    board.write("k", 2, author="x")
    assert entry.value == 1
    with pytest.raises(ValueError, match="frozen"):
        entry.author = "y"


# ------------------------------------------------------------------------- update


def test_update_missing_key_uses_default() -> None:
    board = Blackboard()
    entry = board.update("n", lambda n: n + 1, author="x", default=0)
    assert (entry.value, entry.version, entry.author) == (1, 1, "x")
    assert board.update("n", lambda n: n + 1, author="y").value == 2
    assert _entry(board, "n").version == 2


def test_update_fn_gets_private_copy_of_default_and_value() -> None:
    board = Blackboard()
    default: list[int] = []

    def push(queue: list[int]) -> list[int]:
        queue.append(1)
        return queue

    board.update("q", push, author="x", default=default)
    board.update("q", push, author="x", default=default)
    assert default == []
    assert board.read("q") == [1, 1]


def test_update_fn_error_leaves_board_unchanged() -> None:
    board = Blackboard()
    board.write("q", [1], author="x")
    recorder = Recorder()
    board.subscribe_all(recorder)

    def boom(queue: list[int]) -> list[int]:
        queue.append(2)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        board.update("q", boom, author="x")
    assert board.read("q") == [1]
    assert _entry(board, "q").version == 1
    assert recorder.calls == []


def test_update_with_non_json_result_is_rejected() -> None:
    board = Blackboard()
    board.write("k", 1, author="x")
    with pytest.raises(TypeError, match="'k'"):
        board.update("k", lambda _: {1, 2}, author="x")
    assert board.read("k") == 1


def test_update_fn_may_read_the_board() -> None:
    board = Blackboard()
    board.write("step", 5, author="x")
    board.update("total", lambda t: t + board.read("step"), author="x", default=10)
    assert board.read("total") == 15


def test_update_notifies_subscribers() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.subscribe("q", recorder)
    board.update("q", lambda q: [*q, "a"], author="x", default=[])
    assert recorder.calls == [("q", ["a"], "x")]


# ------------------------------------------------------------------ subscriptions


def test_subscribe_key_gets_only_that_key() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.subscribe("analysis_result", recorder)
    board.write("analysis_result", {"score": 95}, author="analyst")
    board.write("other", 1, author="analyst")
    assert recorder.calls == [("analysis_result", {"score": 95}, "analyst")]


def test_subscribe_all_gets_every_key_after_key_subscribers() -> None:
    board = Blackboard()
    order: list[str] = []
    board.subscribe_all(lambda key, value, author: order.append(f"all:{key}"))
    board.subscribe("a", lambda key, value, author: order.append(f"key:{key}"))
    board.write("a", 1, author="x")
    board.write("b", 2, author="x")
    assert order == ["key:a", "all:a", "all:b"]


def test_subscribing_twice_notifies_once() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.subscribe("k", recorder)
    board.subscribe("k", recorder)
    board.subscribe_all(recorder)
    board.subscribe_all(recorder)
    board.write("k", 1, author="x")
    assert len(recorder.calls) == 2


def test_unsubscribe_stops_notifications() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.subscribe("k", recorder)
    board.subscribe_all(recorder)
    assert board.unsubscribe("k", recorder) is True
    assert board.unsubscribe("k", recorder) is False
    assert board.unsubscribe("other", recorder) is False
    board.write("k", 1, author="x")
    assert len(recorder.calls) == 1
    assert board.unsubscribe_all(recorder) is True
    assert board.unsubscribe_all(recorder) is False
    board.write("k", 2, author="x")
    assert len(recorder.calls) == 1


def test_delete_and_clear_do_not_notify() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.write("k", 1, author="x")
    board.subscribe_all(recorder)
    board.delete("k")
    board.write("j", 1, author="x")
    board.clear()
    assert recorder.calls == [("j", 1, "x")]


def test_failing_subscriber_does_not_break_write_or_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    board = Blackboard()
    recorder = Recorder()

    def broken(key: str, value: Any, author: str) -> None:
        raise RuntimeError("subscriber bug")

    board.subscribe("k", broken)
    board.subscribe_all(recorder)
    with caplog.at_level(logging.WARNING, logger="deskwork.collaboration._blackboard"):
        entry = board.write("k", 1, author="x")
    assert entry.value == 1
    assert board.read("k") == 1
    assert recorder.calls == [("k", 1, "x")]
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "'k'" in record.getMessage()
    assert "RuntimeError: subscriber bug" in caplog.text  # the traceback, redacted into exc_text


def test_subscriber_runs_after_lock_is_released() -> None:
    board = Blackboard()
    finished: list[bool] = []

    def write_from_other_thread(key: str, value: Any, author: str) -> None:
        if key != "trigger":
            return
        worker = threading.Thread(target=board.write, args=("other", 1, "bg"))
        worker.start()
        worker.join(timeout=2)
        finished.append(not worker.is_alive())

    board.subscribe_all(write_from_other_thread)
    board.write("trigger", 1, author="x")
    assert finished == [True]


def test_subscriber_mutation_does_not_reach_board_or_other_subscribers() -> None:
    board = Blackboard()
    recorder = Recorder()
    board.subscribe("k", lambda key, value, author: value.append("evil"))
    board.subscribe_all(recorder)
    board.write("k", [1], author="x")
    assert board.read("k") == [1]
    assert recorder.calls == [("k", [1], "x")]


# -------------------------------------------------------------------- persistence


def test_state_round_trips_through_json() -> None:
    board = Blackboard()
    board.write("a", {"x": [1, 2.5, None, True]}, author="alice")
    board.write("a", {"x": [3]}, author="bob")
    board.write("b", "text", author="carol")
    state = json.loads(json.dumps(board.to_state()))
    restored = Blackboard.from_state(state)
    assert restored.all_entries() == board.all_entries()
    assert restored.keys() == ["a", "b"]
    assert _entry(restored, "a").version == 2


def test_restore_replaces_entries_and_keeps_subscriptions() -> None:
    source = Blackboard()
    source.write("new", 1, author="x")
    board = Blackboard()
    board.write("old", 1, author="x")
    recorder = Recorder()
    board.subscribe_all(recorder)
    board.restore(source.to_state())
    assert board.keys() == ["new"]
    assert recorder.calls == []
    board.write("new", 2, author="y")
    assert recorder.calls == [("new", 2, "y")]
    assert _entry(board, "new").version == 2


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"version": 99, "entries": []},
        {"version": 1},
        {"version": 1, "entries": [{"key": "k"}]},
    ],
)
def test_invalid_state_is_rejected_and_board_unchanged(state: dict[str, Any]) -> None:
    board = Blackboard()
    board.write("k", 1, author="x")
    with pytest.raises(ValueError):
        board.restore(state)
    assert board.snapshot() == {"k": 1}


# ------------------------------------------------------------------------- async


async def test_async_variants() -> None:
    board = Blackboard()
    recorder = Recorder()
    await board.asubscribe("k", recorder)
    await board.asubscribe_all(recorder)
    entry = await board.awrite("k", {"v": 1}, "a")
    assert entry.value == {"v": 1}
    assert await board.aread("k") == {"v": 1}
    assert await board.aread("missing", 3) == 3
    assert (await board.aread_entry("k")) == board.read_entry("k")
    assert await board.aexists("k")
    assert await board.akeys() == ["k"]
    assert list(await board.aall_entries()) == ["k"]
    assert await board.asnapshot() == {"k": {"v": 1}}
    assert (await board.aupdate("n", lambda n: n + 1, "a", 0)).value == 1
    assert recorder.calls == [("k", {"v": 1}, "a"), ("k", {"v": 1}, "a"), ("n", 1, "a")]
    assert await board.aunsubscribe("k", recorder)
    assert await board.aunsubscribe_all(recorder)
    await board.awrite("k", 2, "a")
    assert len(recorder.calls) == 3
    assert await board.adelete("k")
    await board.aclear()
    assert await board.akeys() == []


# ---------------------------------------------------------------------- hammering


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads very often so that a missing lock shows up as lost updates."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def _run_threads(count: int, target: Any) -> None:
    start = threading.Barrier(count)

    def run(index: int) -> None:
        start.wait()
        target(index)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@pytest.mark.usefixtures("fast_thread_switching")
def test_concurrent_updates_lose_nothing() -> None:
    board = Blackboard()
    seen: list[int] = []
    board.subscribe("n", lambda key, value, author: seen.append(value))

    def increment(_: int) -> None:
        for _ in range(500):
            board.update("n", lambda n: n + 1, author="t", default=0)

    _run_threads(16, increment)
    assert board.read("n") == 8000
    assert _entry(board, "n").version == 8000
    assert sorted(seen) == list(range(1, 8001))


@pytest.mark.usefixtures("fast_thread_switching")
def test_concurrent_writes_to_distinct_keys() -> None:
    board = Blackboard()

    def write_keys(index: int) -> None:
        for i in range(100):
            board.write(f"t{index}-{i}", {"thread": index, "i": i}, author=f"t{index}")

    _run_threads(16, write_keys)
    assert len(board) == 1600
    snapshot = board.snapshot()
    assert all(
        snapshot[f"t{t}-{i}"] == {"thread": t, "i": i} for t in range(16) for i in range(100)
    )


@pytest.mark.usefixtures("fast_thread_switching")
async def test_concurrent_async_updates_lose_nothing() -> None:
    board = Blackboard()

    def append(item: int) -> Any:
        return lambda events: [*events, item]

    await asyncio.gather(*(board.aupdate("events", append(i), "task", []) for i in range(200)))
    assert sorted(board.read("events")) == list(range(200))
