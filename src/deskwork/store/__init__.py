"""Run and session storage: interfaces plus in-memory, SQLite and PostgreSQL implementations.

``SQLiteRunStore`` loads ``sqlite3`` on first use; the PostgreSQL stores need the
``postgres`` extra and are imported lazily (``import deskwork`` never imports psycopg).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.core.state import RunOwner, RunRecord, RunState
from deskwork.store._errors import StoreError
from deskwork.store.base import RunStore
from deskwork.store.memory import InMemoryRunStore

if TYPE_CHECKING:
    from deskwork.store.postgres import PostgresRunStore, PostgresSessionStore
    from deskwork.store.session import (
        InMemorySessionStore,
        SessionRecord,
        SessionStore,
        SQLiteSessionStore,
    )
    from deskwork.store.sqlite import SQLiteRunStore

__all__ = [
    "InMemoryRunStore",
    "InMemorySessionStore",
    "PostgresRunStore",
    "PostgresSessionStore",
    "RunOwner",
    "RunRecord",
    "RunState",
    "RunStore",
    "SQLiteRunStore",
    "SQLiteSessionStore",
    "SessionRecord",
    "SessionStore",
    "StoreError",
]

_LAZY = {
    "PostgresRunStore": "deskwork.store.postgres",
    "PostgresSessionStore": "deskwork.store.postgres",
    "SQLiteRunStore": "deskwork.store.sqlite",
    # sessions: loaded by the first session (a plain worker run does not need them)
    "InMemorySessionStore": "deskwork.store.session",
    "SQLiteSessionStore": "deskwork.store.session",
    "SessionRecord": "deskwork.store.session",
    "SessionStore": "deskwork.store.session",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deskwork.store' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
