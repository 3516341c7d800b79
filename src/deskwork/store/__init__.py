"""Run and session storage: interfaces plus in-memory and SQLite implementations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.core.state import RunRecord, RunState
from deskwork.store.base import RunStore
from deskwork.store.memory import InMemoryRunStore
from deskwork.store.session import (
    InMemorySessionStore,
    SessionRecord,
    SessionStore,
    SQLiteSessionStore,
)

if TYPE_CHECKING:
    from deskwork.store.sqlite import SQLiteRunStore

__all__ = [
    "InMemoryRunStore",
    "InMemorySessionStore",
    "RunRecord",
    "RunState",
    "RunStore",
    "SQLiteRunStore",
    "SQLiteSessionStore",
    "SessionRecord",
    "SessionStore",
]


def __getattr__(name: str) -> Any:
    if name == "SQLiteRunStore":  # sqlite3 loads on first use
        from deskwork.store.sqlite import SQLiteRunStore

        return SQLiteRunStore
    raise AttributeError(f"module 'deskwork.store' has no attribute {name!r}")
