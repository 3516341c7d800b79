"""Run and session storage: interfaces plus in-memory, SQLite and PostgreSQL implementations.

``SQLiteRunStore`` loads ``sqlite3`` on first use; the PostgreSQL stores need the
``postgres`` extra and are imported lazily (``import deskwork`` never imports psycopg).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.core.state import RunOwner, RunRecord, RunState
    from deskwork.exceptions import RunNotRunningError
    from deskwork.store._errors import StoreError
    from deskwork.store.base import RunStore
    from deskwork.store.memory import InMemoryRunStore
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
    "RunNotRunningError",
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
    "InMemoryRunStore": "deskwork.store.memory",
    "InMemorySessionStore": "deskwork.store.session",
    "PostgresRunStore": "deskwork.store.postgres",
    "PostgresSessionStore": "deskwork.store.postgres",
    "RunNotRunningError": "deskwork.exceptions",
    "RunOwner": "deskwork.core.state",
    "RunRecord": "deskwork.core.state",
    "RunState": "deskwork.core.state",
    "RunStore": "deskwork.store.base",
    "SQLiteRunStore": "deskwork.store.sqlite",
    "SQLiteSessionStore": "deskwork.store.session",
    "SessionRecord": "deskwork.store.session",
    "SessionStore": "deskwork.store.session",
    "StoreError": "deskwork.store._errors",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
