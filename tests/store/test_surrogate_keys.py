"""A lone surrogate (``"\\ud800"``: Python allows it, UTF-8 cannot encode it) in an id or a
name a store keeps as a key is refused when written, by every store, with the error a NUL
gets ('refused a value'); a read by such an id is unknown (``None``, ``[]``, ``KeyError``
'unknown run'), as any id no run has. The SQL stores raised sqlite3's and psycopg's raw
``UnicodeEncodeError`` for both, and the in-memory store kept such a run."""

from __future__ import annotations

import asyncio

import pytest
from storekit import sample_event

from deskwork.store import RunStore, SessionStore, StoreError

REFUSED = "refused a value: a lone surrogate"
ODD_ID = "a\ud800b"


def test_a_run_with_a_lone_surrogate_in_its_id_or_runner_is_refused(run_store: RunStore) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        run_store.begin_run("r1", None, runner=ODD_ID)
    with pytest.raises(StoreError, match=REFUSED):
        run_store.create_run("r2", None, runner=ODD_ID)
    with pytest.raises(StoreError, match=REFUSED):
        run_store.reserve_run("r3", None, runner=ODD_ID)
    with pytest.raises(StoreError, match=REFUSED):
        run_store.create_run(ODD_ID, None)
    with pytest.raises(StoreError, match=REFUSED):
        run_store.add_event(sample_event(ODD_ID, 1))  # a log of events alone

    async def step() -> None:  # committed later inside a loop: refused now all the same
        with pytest.raises(StoreError, match=REFUSED):
            run_store.begin_run("r6", None, runner=ODD_ID)
        with pytest.raises(StoreError, match=REFUSED):
            run_store.add_event(sample_event(ODD_ID, 2))

    asyncio.run(step())
    assert run_store.list_runs() == []
    run_store.create_run("ok", None, runner="wörker ✓")  # not ASCII, but no surrogate
    assert [(r.run_id, r.runner) for r in run_store.list_runs()] == [("ok", "wörker ✓")]


def test_a_checkpoint_with_a_lone_surrogate_in_its_thread_or_key_is_refused(
    run_store: RunStore,
) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        run_store.put_checkpoint_items(ODD_ID, [("k", b"v")])
    with pytest.raises(StoreError, match=REFUSED):
        run_store.put_checkpoint_items("t", [("k1", b"v"), (ODD_ID, b"v")])
    assert run_store.get_checkpoint_items("t") == []


def test_a_run_id_with_a_lone_surrogate_is_unknown_to_every_read(run_store: RunStore) -> None:
    run_store.create_run("a", None)
    run_store.put_checkpoint_items("t", [("k", b"v")])
    assert run_store.get_run(ODD_ID) is None
    assert run_store.get_events(ODD_ID) == []
    assert run_store.list_runs(runner=ODD_ID) == run_store.list_runs(status=ODD_ID) == []
    with pytest.raises(KeyError, match="unknown run"):
        run_store.update_run(ODD_ID, "completed", "done", None, None)
    with pytest.raises(KeyError, match="unknown run"):
        run_store.finish_run(ODD_ID, "failed", None, None, None, sample_event(ODD_ID, 1))
    assert run_store.claim_paused(ODD_ID) is False
    assert run_store.get_checkpoint_items(ODD_ID) == []
    assert run_store.get_checkpoint_items("t", ODD_ID) == []
    run_store.delete_checkpoint_items(ODD_ID)  # nothing to delete
    assert run_store.get_checkpoint_items("t") == [("k", b"v")]
    assert run_store.get_run("a") is not None


def test_a_session_with_a_lone_surrogate_in_its_id_or_worker_name_is_refused(
    session_store: SessionStore,
) -> None:
    with pytest.raises(StoreError, match=REFUSED):
        session_store.create_session("s1", ODD_ID, {})
    with pytest.raises(StoreError, match=REFUSED):
        session_store.create_session(ODD_ID, "w", {})
    assert session_store.get_session(ODD_ID) is None
    assert session_store.get_messages(ODD_ID) == []
    with pytest.raises(KeyError, match="unknown session"):
        session_store.replace_messages(ODD_ID, [])
    session_store.delete_session(ODD_ID)  # nothing to delete
    session_store.create_session("s1", "w", {})  # the store goes on
