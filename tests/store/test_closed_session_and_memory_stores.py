"""A session or memory store after its ``close()`` follows the run stores' rule: every call
raises the same :class:`StoreError` ("... is closed"), a second ``close()`` does nothing, and
what was written before stays (a store on disk or in PostgreSQL reopened shows it). The
in-memory stores, ``PostgresMemoryStore`` and the Chroma ``VectorMemoryStore`` went on
answering after ``close()``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from storekit import sample_event

from deskwork import Message
from deskwork.memory import InMemoryMemoryStore, MemoryStore, SQLiteMemoryStore
from deskwork.store import (
    InMemorySessionStore,
    RunStore,
    SessionStore,
    SQLiteSessionStore,
    StoreError,
)

Opener = Callable[[], Any]
"""Opens the store (again: on the same file or database)."""

SESSION_CALLS: dict[str, Callable[[SessionStore], Any]] = {
    "create_session": lambda store: store.create_session("new", "w", {}),
    "get_session": lambda store: store.get_session("s"),
    "get_messages": lambda store: store.get_messages("s"),
    "replace_messages": lambda store: store.replace_messages("s", []),
    "delete_session": lambda store: store.delete_session("s"),
}
MEMORY_CALLS: dict[str, Callable[[MemoryStore], Any]] = {
    "write": lambda store: store.write("k2", "v2", "scope"),
    "read": lambda store: store.read("k", "scope"),
    "search": lambda store: store.search("remember", "scope"),
    "reset": lambda store: store.reset("scope"),
}
SESSION_STORES = ["memory", "sqlite", "postgres"]
MEMORY_STORES = ["memory", "sqlite", "postgres", "vector-numpy", "vector-chroma"]
HAS = {name: importlib.util.find_spec(name) is not None for name in ("numpy", "chromadb")}


def _session_opener(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    if kind == "memory":
        store = InMemorySessionStore()
        return lambda: store
    if kind == "sqlite":
        return lambda: SQLiteSessionStore(tmp_path / "sessions.db")
    from deskwork.store.postgres import PostgresSessionStore

    url = request.getfixturevalue("postgres_url")
    return lambda: PostgresSessionStore(url)


def _memory_opener(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    if kind == "memory":
        store = InMemoryMemoryStore()
        return lambda: store
    if kind == "sqlite":
        return lambda: SQLiteMemoryStore(tmp_path / "memory.db")
    if kind == "postgres":
        from deskwork.memory.postgres import PostgresMemoryStore

        url = request.getfixturevalue("postgres_url")
        return lambda: PostgresMemoryStore(url)
    backend = kind.removeprefix("vector-")
    if not HAS["numpy" if backend == "numpy" else "chromadb"]:
        pytest.skip(f"the {'vector' if backend == 'numpy' else 'chroma'} extra is not installed")
    from deskwork.memory import VectorMemoryStore

    return lambda: VectorMemoryStore(tmp_path / "vectors", backend=backend)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", SESSION_CALLS)
@pytest.mark.parametrize("kind", SESSION_STORES)
def test_every_call_to_a_closed_session_store_raises_store_error(
    kind: str, call: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    open_store = _session_opener(kind, request, tmp_path)
    store: SessionStore = open_store()
    store.create_session("s", "w", {"k": 1})
    store.replace_messages("s", [Message(role="user", content="hi")])
    store.close()
    with pytest.raises(StoreError, match="is closed") as raised:
        SESSION_CALLS[call](store)
    assert (raised.value.location is None) == (kind == "memory")
    store.close()  # again: nothing
    if kind != "memory":  # what was written before the close is there
        reopened: SessionStore = open_store()
        try:
            record = reopened.get_session("s")
            assert record is not None and record.metadata == {"k": 1}
            assert [m.content for m in reopened.get_messages("s")] == ["hi"]
        finally:
            reopened.close()


@pytest.mark.parametrize("call", MEMORY_CALLS)
@pytest.mark.parametrize("kind", MEMORY_STORES)
def test_every_call_to_a_closed_memory_store_raises_store_error(
    kind: str, call: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    open_store = _memory_opener(kind, request, tmp_path)
    store: MemoryStore = open_store()
    store.write("k", {"text": "remember this"}, "scope")
    store.close()
    with pytest.raises(StoreError, match="is closed") as raised:
        MEMORY_CALLS[call](store)
    assert (raised.value.location is None) == (kind == "memory")
    store.close()  # again: nothing
    if kind != "memory":  # what was written before the close is there
        reopened: MemoryStore = open_store()
        try:
            assert reopened.read("k", "scope") == {"text": "remember this"}
        finally:
            reopened.close()


ODD_ID = "a\x00b"  # no store keeps one: an open store answers as for an unknown id
ODD_ID_CALLS: dict[str, Callable[[Any], Any]] = {
    "get_run": lambda store: store.get_run(ODD_ID),
    "get_events": lambda store: store.get_events(ODD_ID),
    "update_run": lambda store: store.update_run(ODD_ID, "completed", "done", None, None),
    "finish_run": lambda store: store.finish_run(
        ODD_ID, "failed", None, None, None, sample_event(ODD_ID, 1)
    ),
    "list_runs": lambda store: store.list_runs(runner=ODD_ID),
    "claim_paused": lambda store: store.claim_paused(ODD_ID),
    "get_checkpoint_items": lambda store: store.get_checkpoint_items(ODD_ID),
    "delete_checkpoint_items": lambda store: store.delete_checkpoint_items(ODD_ID),
}
ODD_SESSION_CALLS: dict[str, Callable[[Any], Any]] = {
    "get_session": lambda store: store.get_session(ODD_ID),
    "get_messages": lambda store: store.get_messages(ODD_ID),
    "replace_messages": lambda store: store.replace_messages(ODD_ID, []),
    "delete_session": lambda store: store.delete_session(ODD_ID),
}


@pytest.mark.parametrize("call", ODD_ID_CALLS)
def test_a_closed_run_store_refuses_a_call_by_an_id_no_store_keeps(
    run_store: RunStore, call: str
) -> None:
    run_store.close()
    with pytest.raises(StoreError, match="is closed"):
        ODD_ID_CALLS[call](run_store)


@pytest.mark.parametrize("call", ODD_SESSION_CALLS)
def test_a_closed_session_store_refuses_a_call_by_an_id_no_store_keeps(
    session_store: SessionStore, call: str
) -> None:
    session_store.close()
    with pytest.raises(StoreError, match="is closed"):
        ODD_SESSION_CALLS[call](session_store)


class _CloseFirst:
    """A lock standing in for an in-memory store's own: the first call that takes it finds
    ``close()`` run just before (the call passed any check made before it took the lock)."""

    def __init__(self, store: Any) -> None:
        self.store, self.lock, self.fired = store, store._lock, False

    def __enter__(self) -> None:
        if not self.fired:
            self.fired = True
            self.store._lock = self.lock  # close() takes the real lock
            self.store.close()
            self.store._lock = self
        self.lock.acquire()

    def __exit__(self, *_: object) -> None:
        self.lock.release()


@pytest.mark.parametrize(
    ("make", "call"),
    [(InMemorySessionStore, c) for c in SESSION_CALLS.values()]
    + [(InMemoryMemoryStore, c) for c in MEMORY_CALLS.values()],
)
def test_an_in_memory_call_racing_close_raises_instead_of_completing_after_it(
    make: Callable[[], Any], call: Callable[[Any], Any]
) -> None:
    store = make()
    store._lock = _CloseFirst(store)
    with pytest.raises(StoreError, match="is closed"):
        call(store)
