"""An id with a NUL character, as a client can send one (``GET /runs/a%00b``, or
``?runner=a%00b``), reads as unknown from every store: PostgreSQL's text columns refuse
NUL, and its stores raised the driver's ``DataError`` for such a read (an unhandled error,
a 500, in ``deskwork serve``) where the others answer that no such run or session exists."""

from __future__ import annotations

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
