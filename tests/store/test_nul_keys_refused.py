"""A NUL character in an id or a name a store keeps as a key (a run id, a runner or worker
name, a checkpoint's thread id or key, a session id) is refused when written, by every store
with the same error: PostgreSQL raised psycopg's DataError (or, for a run started inside an
event loop, dropped it on its writer thread after begin_run had returned) while SQLite and
the in-memory store kept it, readable there by an id the others answer as unknown."""

from __future__ import annotations

import asyncio

import pytest
from storekit import sample_event

from deskwork.store import RunStore, SessionStore, StoreError

REFUSED = "refused a value: a NUL character"


def test_a_run_with_nul_in_its_id_or_runner_is_refused(run_store: RunStore) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        run_store.begin_run("r1", None, runner="a\x00b")
    with pytest.raises(StoreError, match=REFUSED):
        run_store.create_run("r2", None, runner="a\x00b")
    with pytest.raises(StoreError, match=REFUSED):
        run_store.reserve_run("r3", None, runner="a\x00b")
    with pytest.raises(StoreError, match=REFUSED):
        run_store.create_run("r\x004", None)
    with pytest.raises(StoreError, match=REFUSED):
        run_store.add_event(sample_event("r\x005", 1))  # a log of events alone

    async def step() -> None:  # committed later inside a loop: refused now all the same
        with pytest.raises(StoreError, match=REFUSED):
            run_store.begin_run("r6", None, runner="a\x00b")

    asyncio.run(step())
    assert run_store.list_runs() == []
    run_store.create_run("ok", None, runner="w")  # the store goes on
    assert [r.run_id for r in run_store.list_runs()] == ["ok"]


def test_a_checkpoint_with_nul_in_its_thread_or_key_is_refused(run_store: RunStore) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        run_store.put_checkpoint_items("t\x00", [("k", b"v")])
    with pytest.raises(StoreError, match=REFUSED):
        run_store.put_checkpoint_items("t", [("k1", b"v"), ("k\x002", b"v")])
    assert run_store.get_checkpoint_items("t") == []


def test_a_session_with_nul_in_its_id_or_worker_name_is_refused(
    session_store: SessionStore,
) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        session_store.create_session("s1", "w\x00x", {})
    with pytest.raises(StoreError, match=REFUSED):
        session_store.create_session("s\x002", "w", {})
    assert session_store.get_session("s1") is None
    session_store.create_session("s1", "w", {})  # the store goes on
