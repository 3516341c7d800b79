"""An id with a NUL character, as a client can send one (``GET /runs/a%00b``, or
``?runner=a%00b``), reads as unknown from every store: PostgreSQL's text columns refuse
NUL, and its stores raised the driver's ``DataError`` for such a read (an unhandled error,
a 500, in ``deskwork serve``) where the others answer that no such run or session exists."""

from __future__ import annotations

import pytest
from storekit import sample_event

from deskwork.store import RunStore, SessionStore

NUL_ID = "a\x00b"


def test_a_run_id_with_nul_reads_as_no_run(run_store: RunStore) -> None:
    run_store.create_run("a", None)  # a stored run whose id is the part before the NUL
    assert run_store.get_run(NUL_ID) is None
    assert run_store.get_events(NUL_ID) == []
    assert run_store.list_runs(runner=NUL_ID) == run_store.list_runs(status=NUL_ID) == []
    assert run_store.get_run("a") is not None


def test_a_session_id_with_nul_reads_as_no_session(session_store: SessionStore) -> None:
    assert session_store.get_session(NUL_ID) is None
    assert session_store.get_messages(NUL_ID) == []


def test_a_key_with_nul_is_unknown_to_every_other_call(run_store: RunStore) -> None:
    """Past the reads above: a run's update, end and claim, a thread's checkpoints (by its
    id or a key prefix) answer for an unknown run or thread, not with psycopg's DataError."""
    run_store.put_checkpoint_items("t", [("k", b"v")])
    with pytest.raises(KeyError, match="unknown run"):
        run_store.update_run(NUL_ID, "completed", "done", None, None)
    with pytest.raises(KeyError, match="unknown run"):
        run_store.finish_run(NUL_ID, "failed", None, None, None, sample_event("a", 1))
    assert run_store.claim_paused(NUL_ID) is False
    assert run_store.get_checkpoint_items(NUL_ID) == []
    assert run_store.get_checkpoint_items("t", "k\x00") == []
    run_store.delete_checkpoint_items(NUL_ID)  # nothing to delete
    assert run_store.get_checkpoint_items("t") == [("k", b"v")]


def test_a_session_key_with_nul_is_unknown_to_its_writes(session_store: SessionStore) -> None:
    with pytest.raises(KeyError, match="unknown session"):
        session_store.replace_messages(NUL_ID, [])
    session_store.delete_session(NUL_ID)  # nothing to delete
