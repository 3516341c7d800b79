"""PostgreSQL memory store (the ``postgres`` extra); shares the URL's pool with the other stores."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from deskwork.memory.base import MemoryStore
from deskwork.store._blobs import json_text
from deskwork.store._errors import check_keys
from deskwork.store._url import redact_url
from deskwork.store.postgres import _PostgresStore
from deskwork.utils import to_jsonable, utc_now

__all__ = ["PostgresMemoryStore"]

_MEMORY_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS deskwork_memory (scope TEXT NOT NULL, key TEXT NOT NULL,"
        " value TEXT NOT NULL, updated_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (scope, key))",
    ],
]


class PostgresMemoryStore(_PostgresStore, MemoryStore):
    """Memory in PostgreSQL (``deskwork_memory``): values are JSON; search matches key or value
    substrings, ignoring case."""

    _component: ClassVar[str] = "memory"
    _migrations: ClassVar[list[list[str]]] = _MEMORY_MIGRATIONS

    def write(self, key: str, value: Any, scope: str) -> None:
        check_keys(redact_url(self._db.url), key, scope)
        encoded = json_text(to_jsonable(value))  # searchable as written
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO deskwork_memory (scope, key, value, updated_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (scope, key)"
                " DO UPDATE SET value=EXCLUDED.value, updated_at=EXCLUDED.updated_at",
                (scope, key, encoded, utc_now()),
            )

    def read(self, key: str, scope: str) -> Any | None:
        if self._unknown(key, scope):  # no stored key has such a character
            return None
        with self._connection() as conn:
            row = conn.execute(
                "SELECT value FROM deskwork_memory WHERE scope=%s AND key=%s", (scope, key)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        literal = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{literal}%"  # a substring match: "%" and "_" in the query are literal
        if self._unknown(scope, query):  # (a text column cannot hold one)
            return []
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT key, value FROM deskwork_memory WHERE scope=%s"
                ' AND (key ILIKE %s OR value ILIKE %s) ORDER BY key COLLATE "C"',
                (scope, pattern, pattern),
            ).fetchall()
        return [(str(row[0]), json.loads(row[1])) for row in rows]

    def reset(self, scope: str) -> None:
        if self._unknown(scope):
            return
        with self._connection() as conn:
            conn.execute("DELETE FROM deskwork_memory WHERE scope=%s", (scope,))
