"""Shared SQLite connection handling for the embedded stores.

Opening a database checks it: an existing file of 0 bytes, a file that is not a SQLite
database, or (for files up to ``QUICK_CHECK_MAX_BYTES``) one that fails ``PRAGMA
quick_check`` raises :class:`~deskwork.store.StoreError` naming the file. Later corruption
errors raise the same error. The damaged file is never changed, overwritten or removed.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from deskwork.store._errors import StoreError, closed_store, unstorable_text
from deskwork.store._url import DB_FILENAME

__all__ = ["QUICK_CHECK_MAX_BYTES", "SQLiteDatabase", "integrity_problems", "sendable"]

QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024
"""Files up to this size are checked with ``PRAGMA quick_check`` when opened (~0.1 s/64 MB)."""
_UNDECODABLE = "Could not decode to UTF-8"  # sqlite3's OperationalError for such a text
_FRESH_SECONDS = 2.0  # an empty file younger than this is another process creating the store
_SCHEMA_TABLE = (
    "CREATE TABLE IF NOT EXISTS deskwork_schema"
    " (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


def sendable(text: str) -> str | bytes:
    """``text`` as sqlite3 can send it: as it is, or, with a lone surrogate in it (which
    UTF-8 cannot encode: sqlite3 raises ``UnicodeEncodeError``), its bytes with the surrogate
    kept (``surrogatepass``), a BLOB, whose type tells it apart from a text when read."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _damaged(path: Path, problem: str) -> StoreError:
    return StoreError(
        f"the deskwork database {path} is damaged ({problem}). It was left as it is: restore"
        f" it from a backup, or move it away (e.g. to {path.name}.damaged) to start a new"
        " store; 'deskwork doctor' reports what is wrong.",
        location=str(path),
    )


class SQLiteDatabase:
    """One thread-safe connection to a SQLite file, in WAL mode, checked when opened.

    Every statement commits on its own (autocommit) unless run inside :meth:`transaction`.
    After :meth:`close` every use raises :class:`StoreError` (not ``sqlite3``'s own error).
    """

    def __init__(self, path: str | Path, *, check: bool = True) -> None:
        self.path = Path(path)
        memory = str(path) == ":memory:"
        if not memory:
            self._make_directory()
            self._check_file()
        fresh = memory or not self.path.exists()
        try:
            self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            if fresh:  # nothing there to be damaged
                raise StoreError(
                    f"cannot create the deskwork database {self.path}: {exc}",
                    location=str(self.path),
                ) from None
            raise _damaged(self.path, str(exc)) from None
        self.lock = threading.RLock()
        self._committing = False
        self.closed = False
        try:
            self._prepare(check=check and not memory)
        except BaseException:
            self.conn.close()
            raise

    def _prepare(self, *, check: bool) -> None:
        with self.locked() as conn:
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            if check and self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
                problems = integrity_problems(conn, quick=True)
                if problems:
                    raise _damaged(self.path, "; ".join(problems[:3]))

    def _make_directory(self) -> None:
        """The database file's directory, made if missing: a file in the way, or a place
        that cannot be written, is a :class:`StoreError` (it was ``OSError``)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot make the directory of the deskwork database {self.path}:"
                f" {exc.strerror or exc}; give a storage directory or database URL that can"
                " be written",
                location=str(self.path),
            ) from None

    def _check_file(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if self.path.is_dir():  # not damage: it said "damaged ... move it away"
            raise StoreError(
                f"{self.path} is a directory, not a deskwork database file: name the file"
                f" (for example {self.path / DB_FILENAME})",
                location=str(self.path),
            )
        if stat.st_size == 0 and time.time() - stat.st_mtime > _FRESH_SECONDS:
            raise _damaged(self.path, "the file is empty: it was truncated or never written")

    @contextmanager
    def locked(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; corruption errors become :class:`StoreError`."""
        with self.lock:
            self.check_open()
            try:
                yield self.conn
            except sqlite3.DatabaseError as exc:
                # not locked/integrity/programming errors; but a text column whose bytes are
                # not UTF-8 (a damaged page that SQLite itself does not notice) is damage
                if type(exc) is sqlite3.DatabaseError or str(exc).startswith(_UNDECODABLE):
                    raise _damaged(self.path, str(exc)) from exc
                raise

    @contextmanager
    def transaction(self, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection inside one transaction, committed on success, rolled back on error.

        A transaction still open here was left by a write an exception interrupted before it
        could roll back (a signal handler's, such as Ctrl-C's, raised between its ``BEGIN``
        and its ``try``): it never committed, and is rolled back, or every later write would
        fail with "cannot start a transaction within a transaction".
        """
        with self.locked() as conn:
            self._committing = False
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._committing = True  # (an assignment runs no signal handler)
            conn.execute("COMMIT")

    def committed(self) -> bool:
        """Whether the last :meth:`transaction` committed, for a caller an exception reached:
        one a signal handler raised just after its ``COMMIT`` returned left it committed (a
        failed ``COMMIT`` leaves the transaction open). Call it under :attr:`lock`."""
        return self._committing and not self.conn.in_transaction

    def migrate(self, component: str, migrations: Sequence[Sequence[str]]) -> None:
        """Apply the migrations ``component`` lacks; version ``n`` is ``migrations[n - 1]``."""
        with self.transaction(immediate=True) as conn:  # one process migrates at a time
            conn.execute(_SCHEMA_TABLE)
            row = conn.execute(
                "SELECT version FROM deskwork_schema WHERE component=?", (component,)
            ).fetchone()
            current = int(row[0]) if row else 0
            if current > len(migrations):
                raise StoreError(
                    f"the {component} tables in {self.path} have schema version {current},"
                    f" newer than this deskwork knows ({len(migrations)}): upgrade deskwork",
                    location=str(self.path),
                )
            for statements in migrations[current:]:
                for statement in statements:
                    conn.execute(statement)
            conn.execute(
                "INSERT OR REPLACE INTO deskwork_schema (component, version) VALUES (?, ?)",
                (component, len(migrations)),
            )

    def damaged(self, problem: str) -> StoreError:
        """The error for this file being damaged (``problem`` says how); the file is left as
        it is."""
        return _damaged(self.path, problem)

    def check_open(self) -> None:
        """Raise the closed store's :class:`StoreError` after :meth:`close`."""
        if self.closed:
            raise closed_store(str(self.path))

    def unknown(self, *keys: str) -> bool:
        """Whether a read or a lookup by ``keys`` finds nothing because one holds a character
        no stored key has (:func:`~deskwork.store._errors.unstorable_text`; sqlite3 cannot
        even send a lone surrogate): answered without a query, but after :meth:`close` with
        the closed store's :class:`StoreError`, as every call."""
        for key in keys:
            if unstorable_text(key):
                self.check_open()
                return True
        return False

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        with self.lock:
            self.closed = True
            self.conn.close()


def integrity_problems(conn: sqlite3.Connection, *, quick: bool) -> list[str]:
    """What ``PRAGMA quick_check``/``integrity_check`` finds (empty when the file is sound)."""
    try:
        rows = conn.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    found = [str(row[0]) for row in rows]
    return [] if found == ["ok"] else found
