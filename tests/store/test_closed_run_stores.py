"""A run store after its ``close()``: every call raises the same :class:`StoreError` on every
backend (SQLite raised ``sqlite3.ProgrammingError``, the in-memory store went on keeping
runs, PostgreSQL said its closed pool "cannot be reached"), and ``close()`` again does
nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from storekit import sample_event

from deskwork.store import RunStore, StoreError

CALLS: dict[str, Callable[[RunStore], Any]] = {
    "begin_run": lambda store: store.begin_run("new", None, runner="w"),
    "create_run": lambda store: store.create_run("new", None),
    "reserve_run": lambda store: store.reserve_run("new", None),
    "update_run": lambda store: store.update_run("r", "completed", "done", None, None),
    "finish_run": lambda store: store.finish_run(
        "r", "completed", "done", None, None, sample_event("r", 9)
    ),
    "claim_paused": lambda store: store.claim_paused("r"),
    "get_run": lambda store: store.get_run("r"),
    "list_runs": lambda store: store.list_runs(),
    "add_event": lambda store: store.add_event(sample_event("r", 2)),
    "get_events": lambda store: store.get_events("r"),
    "put_checkpoint_items": lambda store: store.put_checkpoint_items("r", [("k", b"v")]),
    "get_checkpoint_items": lambda store: store.get_checkpoint_items("r"),
    "delete_checkpoint_items": lambda store: store.delete_checkpoint_items("r"),
    "flush": lambda store: store.flush(),
}


@pytest.mark.parametrize("call", CALLS)
def test_every_call_to_a_closed_run_store_raises_store_error(
    run_store: RunStore, call: str
) -> None:
    run_store.create_run("r", None)
    run_store.add_event(sample_event("r", 1))
    run_store.close()
    with pytest.raises(StoreError, match="is closed"):
        CALLS[call](run_store)
    run_store.close()  # again: nothing


def test_an_event_added_in_an_event_loop_after_close_is_refused(run_store: RunStore) -> None:
    """Inside a loop the SQL stores commit an event later: one added after ``close()`` was
    accepted and then lost (SQLite), or started a new writer thread (PostgreSQL)."""
    run_store.create_run("r", None)
    run_store.close()
    writers = _writer_threads()

    async def step() -> None:
        with pytest.raises(StoreError, match="is closed"):
            run_store.add_event(sample_event("r", 1))
        with pytest.raises(StoreError, match="is closed"):
            run_store.begin_run("new", None, runner="w")
        await asyncio.sleep(0)  # a commit scheduled on this loop would run here

    asyncio.run(step())
    assert _writer_threads() == writers
    run_store.close()  # nothing pending: again, nothing


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("deskwork-pg-events")]
