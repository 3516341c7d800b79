"""Run and session storage: interfaces plus in-memory and SQLite implementations."""

from deskwork.core.state import RunRecord, RunState
from deskwork.store.base import RunStore
from deskwork.store.memory import InMemoryRunStore
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
    "RunRecord",
    "RunState",
    "RunStore",
    "SQLiteRunStore",
    "SQLiteSessionStore",
    "SessionRecord",
    "SessionStore",
]
