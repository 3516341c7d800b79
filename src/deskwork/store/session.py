"""Session stores: persisted multi-turn conversations bound to a worker."""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from deskwork.core._model import DeskworkModel
from deskwork.core.message import Message
from deskwork.store._blobs import dump_model, load_model
from deskwork.store._decoding import decoding
from deskwork.store._errors import check_keys, closed_store
from deskwork.utils import new_id, utc_now

__all__ = ["InMemorySessionStore", "SQLiteSessionStore", "SessionRecord", "SessionStore"]


class SessionRecord(DeskworkModel):
    """A stored session (without its messages)."""

    id: str
    worker_name: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class SessionStore(ABC):
    """Stores sessions and their ordered messages.

    After :meth:`close`, every call raises :class:`~deskwork.exceptions.StoreError` ("... is
    closed"), on every built-in store (as a :class:`~deskwork.store.RunStore` does), and a
    second :meth:`close` does nothing; what was written before stays (a store on disk or in
    PostgreSQL reopened shows it).
    """

    @abstractmethod
    def create_session(
        self, session_id: str, worker_name: str, metadata: dict[str, Any]
    ) -> SessionRecord:
        """Create a session.

        Raises:
            ValueError: a session with this id exists.
        """

    @abstractmethod
    def get_session(self, session_id: str) -> SessionRecord | None:
        """The session, or ``None``."""

    @abstractmethod
    def get_messages(self, session_id: str) -> list[Message]:
        """The session's messages in order."""

    @abstractmethod
    def replace_messages(self, session_id: str, messages: list[Message]) -> None:
        """Replace the session's whole history (after a turn or a compaction).

        Raises:
            KeyError: no such session.
        """

    def update_messages(
        self, session_id: str, update: Callable[[list[Message]], list[Message]]
    ) -> None:
        """Replace the session's history with ``update(history)``: a turn that saves what
        it added to the history it read, whatever other turns saved meanwhile.

        The built-in stores read and write in one transaction, so two processes saving a
        turn of one session each see the other's (``update`` runs inside it: keep it a pure,
        quick function). This default reads, then replaces: a store of your own that can do
        better overrides it.

        Raises:
            KeyError: no such session.
        """
        self.replace_messages(session_id, update(self.get_messages(session_id)))

    @abstractmethod
    def delete_session(self, session_id: str) -> None:
        """Remove the session and its messages."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (see the class: a closed store)."""


class InMemorySessionStore(SessionStore):
    """Sessions in a dictionary, for tests and ephemeral use."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionRecord] = {}
        self._messages: dict[str, list[Message]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Keep nothing more: every later call raises :class:`StoreError`, as on the stores
        that persist (a second ``close()`` does nothing). A call that holds the lock ends
        first; one that takes it after this raises."""
        with self._lock:
            self._closed = True

    def create_session(
        self, session_id: str, worker_name: str, metadata: dict[str, Any]
    ) -> SessionRecord:
        check_keys(None, session_id, worker_name)  # as the stores that persist
        now = utc_now()
        record = SessionRecord(
            id=session_id,
            worker_name=worker_name,
            metadata=metadata,
            created_at=now,
            updated_at=now,
        )
        with self._lock:
            if self._closed:
                raise closed_store(None)
            if session_id in self._sessions:
                raise ValueError(f"session {session_id!r} already exists")
            self._sessions[session_id] = record
            self._messages[session_id] = []
        return record

    def get_session(self, session_id: str) -> SessionRecord | None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            return self._sessions.get(session_id)

    def get_messages(self, session_id: str) -> list[Message]:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            return [m.model_copy(deep=True) for m in self._messages.get(session_id, ())]

    def replace_messages(self, session_id: str, messages: list[Message]) -> None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            if session_id not in self._sessions:
                raise KeyError(f"unknown session {session_id!r}")
            self._replace(session_id, messages)

    def update_messages(
        self, session_id: str, update: Callable[[list[Message]], list[Message]]
    ) -> None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            if session_id not in self._sessions:
                raise KeyError(f"unknown session {session_id!r}")
            current = [m.model_copy(deep=True) for m in self._messages[session_id]]
            self._replace(session_id, update(current))

    def _replace(self, session_id: str, messages: list[Message]) -> None:
        """(Under the lock, the session known.)"""
        self._messages[session_id] = [m.model_copy(deep=True) for m in messages]
        record = self._sessions[session_id]
        self._sessions[session_id] = record.model_copy(update={"updated_at": utc_now()})

    def delete_session(self, session_id: str) -> None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            self._sessions.pop(session_id, None)
            self._messages.pop(session_id, None)


# Forward migrations: append, never edit a released entry (version n = entry n - 1).
_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, worker_name TEXT NOT NULL,"
        " metadata TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS session_messages (id TEXT PRIMARY KEY,"
        " session_id TEXT NOT NULL, message_json TEXT NOT NULL, timestamp TEXT NOT NULL,"
        " FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE)",
        "CREATE INDEX IF NOT EXISTS session_messages_session ON session_messages(session_id)",
    ],
]


class SQLiteSessionStore(SessionStore):
    """Sessions in SQLite (the default; same file as the run store)."""

    def __init__(self, path: str | Path) -> None:
        from deskwork.store._sqlite import SQLiteDatabase  # sqlite3 loads on first use

        self._db = SQLiteDatabase(path)
        try:
            self._db.migrate("sessions", _MIGRATIONS)
        except BaseException:
            self._db.close()
            raise

    def create_session(
        self, session_id: str, worker_name: str, metadata: dict[str, Any]
    ) -> SessionRecord:
        check_keys(str(self._db.path), session_id, worker_name)
        now = utc_now()
        record = SessionRecord(  # refused metadata (a key not a text) leaves no row behind
            id=session_id,
            worker_name=worker_name,
            metadata=metadata,
            created_at=now,
            updated_at=now,
        )
        with self._db.locked() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, worker_name, metadata, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?)",
                (session_id, worker_name, json.dumps(metadata), now.isoformat(), now.isoformat()),
            )
        if cursor.rowcount == 0:
            raise ValueError(f"session {session_id!r} already exists")
        return record

    def get_session(self, session_id: str) -> SessionRecord | None:
        if self._db.unknown(session_id):  # an id from outside (/sessions/{id}): not found
            return None
        with self._db.locked() as conn:
            row = conn.execute(
                "SELECT id, worker_name, metadata, created_at, updated_at FROM sessions WHERE id=?",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        with self._decoding(f"session {session_id}"):
            return SessionRecord(
                id=row[0],
                worker_name=row[1],
                metadata=json.loads(row[2]),
                created_at=datetime.fromisoformat(row[3]),
                updated_at=datetime.fromisoformat(row[4]),
            )

    def get_messages(self, session_id: str) -> list[Message]:
        if self._db.unknown(session_id):  # (sqlite3 cannot send a lone surrogate)
            return []
        with self._db.locked() as conn:
            return self._read(conn, session_id)

    def replace_messages(self, session_id: str, messages: list[Message]) -> None:
        self._write(session_id, lambda _conn: messages)  # (what it replaces is not read)

    def update_messages(
        self, session_id: str, update: Callable[[list[Message]], list[Message]]
    ) -> None:
        self._write(session_id, lambda conn: update(self._read(conn, session_id)))

    def _read(self, conn: Any, session_id: str) -> list[Message]:
        rows = conn.execute(
            "SELECT message_json FROM session_messages WHERE session_id=? ORDER BY rowid",
            (session_id,),
        ).fetchall()
        with self._decoding(f"a message of session {session_id}"):
            return [load_model(Message, row[0]) for row in rows]

    def _write(self, session_id: str, messages_of: Callable[[Any], list[Message]]) -> None:
        """Replace the session's messages with ``messages_of(connection)``, in a transaction
        no other writer enters until it ends."""
        if self._db.unknown(session_id):  # no stored session has one
            raise KeyError(f"unknown session {session_id!r}")
        now = utc_now().isoformat()
        with self._db.transaction(immediate=True) as conn:
            cursor = conn.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now, session_id))
            if cursor.rowcount == 0:
                raise KeyError(f"unknown session {session_id!r}")
            messages = messages_of(conn)
            conn.execute("DELETE FROM session_messages WHERE session_id=?", (session_id,))
            conn.executemany(
                "INSERT INTO session_messages (id, session_id, message_json, timestamp)"
                " VALUES (?, ?, ?, ?)",
                [(new_id(), session_id, dump_model(m), now) for m in messages],
            )

    def delete_session(self, session_id: str) -> None:
        if self._db.unknown(session_id):
            return
        with self._db.locked() as conn:
            conn.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    def close(self) -> None:
        """Close the file (again: nothing); every later call raises :class:`StoreError`."""
        self._db.close()

    def _decoding(self, what: str) -> AbstractContextManager[None]:
        """A stored value damaged in place (the file itself sound) is a StoreError too."""
        return decoding(what, self._db.damaged)
