"""Shared SQLite connection handling for the embedded stores."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

__all__ = ["SQLiteDatabase"]


class SQLiteDatabase:
    """One thread-safe connection to a SQLite file, in WAL mode."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.lock = threading.RLock()
        with self.lock:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=5000")

    def close(self) -> None:
        with self.lock:
            self.conn.close()
