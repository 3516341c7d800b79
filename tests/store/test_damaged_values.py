"""A value damaged in place (the database itself sound, but a stored JSON text, record or
timestamp no longer parses) is a clear ``StoreError`` naming the database and the value,
from the PostgreSQL run and session stores and the SQLite session store too, never a raw
``JSONDecodeError``/``ValidationError``; the damaged row is left as it is (issue 12 item 15)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from storekit import paused_state

from deskwork import Event, Message
from deskwork.store import SQLiteSessionStore, StoreError
from deskwork.store.session import SessionStore
from deskwork.utils import new_id, utc_now

Read = Callable[[Any], object]


def _event(run_id: str) -> Event:
    return Event(
        event_id=new_id(), type="tool.completed", timestamp=utc_now(), run_id=run_id,
        source="s", payload={"result": "noted"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("table", "column", "value", "read", "names"),
    [
        ("deskwork_runs", "input", "{broken", lambda s: s.get_run("r1"), "run r1"),
        ("deskwork_runs", "state", '{"run_id": 5}', lambda s: s.get_run("r1"), "run r1"),
        ("deskwork_runs", "status", "compXeted", lambda s: s.list_runs(), "a run record"),
        ("deskwork_runs", "owner", "not json", lambda s: s.list_runs(), "a run record"),
        ("deskwork_events", "payload", "#noted", lambda s: s.get_events("r1"), "event of run r1"),
    ],
    ids=["input", "state", "status", "owner", "event-payload"],
)
def test_a_damaged_postgres_run_value_is_a_store_error(
    postgres_url: str, table: str, column: str, value: str, read: Read, names: str
) -> None:
    import psycopg

    from deskwork.store.postgres import PostgresRunStore

    store = PostgresRunStore(postgres_url)
    try:
        store.create_run("r1", {"input": "hi"}, runner="w")
        store.add_event(_event("r1"))
        store.update_run("r1", "paused", None, None, paused_state("r1"))
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"UPDATE {table} SET {column}=%s", (value,))
            with pytest.raises(StoreError, match="cannot be read") as caught:
                read(store)
            assert names in str(caught.value) and "is damaged" in str(caught.value)
            assert caught.value.location is not None
            assert caught.value.location.startswith("postgresql://")
            kept = conn.execute(f"SELECT {column} FROM {table}").fetchall()
        assert kept == [(value,)]  # left as it is, for the user to repair
        assert store.get_run("r2") is None  # the store still works
    finally:
        store.close()


_SESSION_DAMAGE = [
    ("sessions", "metadata", "{broken", "get_session", "session s1"),
    ("sessions", "created_at", "yesterday", "get_session", "session s1"),
    ("session_messages", "message_json", '{"role": "robot"}', "get_messages", "session s1"),
]


def _damage_session(
    store: SessionStore, update: Callable[[str, str, str], None], case: tuple[str, ...]
) -> None:
    table, column, value, method, names = case
    store.create_session("s1", "w", {"k": 1})
    store.replace_messages("s1", [Message(role="user", content="hi")])
    update(table, column, value)
    with pytest.raises(StoreError, match="cannot be read") as caught:
        getattr(store, method)("s1")
    assert names in str(caught.value) and "is damaged" in str(caught.value)
    assert store.get_session("s2") is None  # the store still works


@pytest.mark.parametrize("case", _SESSION_DAMAGE, ids=lambda c: c[1])
def test_a_damaged_sqlite_session_value_is_a_store_error_naming_the_file(
    tmp_path: Path, case: tuple[str, ...]
) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)

    def update(table: str, column: str, value: str) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE {table} SET {column}=?", (value,))
        conn.close()

    try:
        _damage_session(store, update, case)
    finally:
        store.close()
    with pytest.raises(StoreError, match="cannot be read") as caught:
        reopened = SQLiteSessionStore(path)  # the damage is kept, and still reported
        try:
            getattr(reopened, case[3])("s1")
        finally:
            reopened.close()
    assert caught.value.location == str(path) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    "case", [c for c in _SESSION_DAMAGE if c[1] != "created_at"], ids=lambda c: c[1]
)  # PostgreSQL types its timestamps: it refuses a damaged one itself
def test_a_damaged_postgres_session_value_is_a_store_error(
    postgres_url: str, case: tuple[str, ...]
) -> None:
    import psycopg

    from deskwork.store.postgres import PostgresSessionStore

    store = PostgresSessionStore(postgres_url)

    def update(table: str, column: str, value: str) -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"UPDATE deskwork_{table} SET {column}=%s", (value,))

    try:
        _damage_session(store, update, case)
    finally:
        store.close()
