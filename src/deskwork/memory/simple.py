"""In-memory and SQLite memory stores."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from deskwork.memory.base import MemoryStore
from deskwork.store._blobs import json_text
from deskwork.store._errors import check_keys, closed_store
from deskwork.utils import JSON_ATOMS, to_jsonable, utc_now

__all__ = ["InMemoryMemoryStore", "SQLiteMemoryStore"]


def _matches(query: str, key: str, value: Any) -> bool:
    needle = query.lower()
    text = json.dumps(value, default=str, ensure_ascii=False)  # "é", not "\u00e9"
    return needle in key.lower() or needle in text.lower()


def _copied(value: Any) -> Any:
    """``copy.deepcopy(value)``, which is ``value`` itself for a text, number or ``None`` (a
    run's last output, usually: every run writes one and reads its context)."""
    return value if type(value) in JSON_ATOMS else copy.deepcopy(value)


class InMemoryMemoryStore(MemoryStore):
    """Memory in a dictionary: fast, not persisted."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Keep nothing more: every later call raises :class:`StoreError`, as on the stores
        that persist (a second ``close()`` does nothing). A call that holds the lock ends
        first; one that takes it after this raises."""
        with self._lock:
            self._closed = True

    def write(self, key: str, value: Any, scope: str) -> None:
        if not (key.isascii() and scope.isascii()) or "\x00" in key or "\x00" in scope:
            check_keys(None, key, scope)  # as the stores that persist
        with self._lock:
            if self._closed:
                raise closed_store(None)
            self._data.setdefault(scope, {})[key] = _copied(value)

    def read(self, key: str, scope: str) -> Any | None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            return _copied(self._data.get(scope, {}).get(key))

    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            items = list(self._data.get(scope, {}).items())
        return [(k, _copied(v)) for k, v in items if _matches(query, k, v)]

    def reset(self, scope: str) -> None:
        with self._lock:
            if self._closed:
                raise closed_store(None)
            self._data.pop(scope, None)


# Forward migrations: append, never edit a released entry (version n = entry n - 1).
_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS memory (scope TEXT NOT NULL, key TEXT NOT NULL,"
        " value TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (scope, key))",
    ],
]


class SQLiteMemoryStore(MemoryStore):
    """Memory persisted in SQLite; values are JSON; search matches key or value substrings."""

    def __init__(self, path: str | Path) -> None:
        from deskwork.store._sqlite import SQLiteDatabase  # sqlite3 loads on first use

        self._db = SQLiteDatabase(path)
        try:
            self._db.migrate("memory", _MIGRATIONS)
        except BaseException:
            self._db.close()
            raise

    def write(self, key: str, value: Any, scope: str) -> None:
        check_keys(str(self._db.path), key, scope)
        encoded = json_text(to_jsonable(value))  # searchable as written
        with self._db.locked() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO memory (scope, key, value, updated_at) VALUES (?,?,?,?)",
                (scope, key, encoded, utc_now().isoformat()),
            )

    def read(self, key: str, scope: str) -> Any | None:
        if self._db.unknown(key, scope):  # no stored key has such a character
            return None
        with self._db.locked() as conn:
            row = conn.execute(
                "SELECT value FROM memory WHERE scope=? AND key=?", (scope, key)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        literal = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{literal}%"  # a substring match: "%" and "_" in the query are literal
        if self._db.unknown(scope, query):  # (sqlite3 cannot send one)
            return []
        with self._db.locked() as conn:
            rows = conn.execute(
                "SELECT key, value FROM memory WHERE scope=?"
                " AND (key LIKE ? ESCAPE '\\' OR value LIKE ? ESCAPE '\\') ORDER BY key",
                (scope, pattern, pattern),
            ).fetchall()
        return [(row[0], json.loads(row[1])) for row in rows]

    def reset(self, scope: str) -> None:
        if self._db.unknown(scope):
            return
        with self._db.locked() as conn:
            conn.execute("DELETE FROM memory WHERE scope=?", (scope,))

    def close(self) -> None:
        """Close the file (again: nothing); every later call raises :class:`StoreError`."""
        self._db.close()
