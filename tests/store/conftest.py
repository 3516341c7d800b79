"""Store fixtures: every backend (in-memory, SQLite, PostgreSQL) behind the same contract.

PostgreSQL tests use the server at ``$DESKWORK_TEST_POSTGRES_URL`` (default: the project
machine's ``postgresql://postgres@127.0.0.1:5432/test``), each test in a schema of its own
that is dropped afterwards. Without a reachable server they skip, unless
``DESKWORK_REQUIRE_POSTGRES=1`` (set by CI) turns that into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from deskwork.memory import InMemoryMemoryStore, MemoryStore, SQLiteMemoryStore
from deskwork.store import (
    InMemoryRunStore,
    InMemorySessionStore,
    RunStore,
    SessionStore,
    SQLiteRunStore,
    SQLiteSessionStore,
)
from deskwork.utils import new_id

BACKENDS = ["memory", "sqlite", "postgres"]
_SERVER = os.environ.get("DESKWORK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


_unavailable: list[str] = []  # the reason, once found: later tests do not wait again


def _server_or_skip() -> Any:
    """A psycopg connection to the test server, or skip (fail when PostgreSQL is required)."""
    reason = _unavailable[0] if _unavailable else ""
    if not reason:
        try:
            import psycopg
        except ImportError:
            reason = "psycopg is not installed (pip install 'deskwork[postgres]')"
        else:
            try:
                return psycopg.connect(_SERVER, autocommit=True, connect_timeout=3)
            except psycopg.Error as exc:
                reason = f"no PostgreSQL at {_SERVER}: {str(exc).strip().splitlines()[0]}"
        _unavailable.append(reason)
    if os.environ.get("DESKWORK_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"DESKWORK_REQUIRE_POSTGRES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of an empty schema of its own on the test server (dropped afterwards)."""
    admin = _server_or_skip()
    schema = f"deskwork_test_{new_id()[:12].lower()}"
    admin.execute(f'CREATE SCHEMA "{schema}"')
    separator = "&" if "?" in _SERVER else "?"
    yield f"{_SERVER}{separator}options={quote(f'-csearch_path={schema}')}"
    from deskwork.store.postgres import PostgresDatabase

    for database in list(PostgresDatabase._shared.values()):  # a test that forgot close()
        if schema in database.url:
            database.pool.close()
            PostgresDatabase._shared.pop(database.url, None)
    admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
    admin.close()


def _url_for(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return f"sqlite:///{tmp_path / 'deskwork.db'}"


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL of the backend named by ``request.param`` (``sqlite``/``postgres``)."""
    return _url_for(getattr(request, "param", "sqlite"), request, tmp_path)


@pytest.fixture(params=BACKENDS)
def run_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    kind = request.param
    made: RunStore
    if kind == "memory":
        made = InMemoryRunStore()
    elif kind == "sqlite":
        made = SQLiteRunStore(tmp_path / "runs.db")
    else:
        from deskwork.store.postgres import PostgresRunStore

        made = PostgresRunStore(_url_for(kind, request, tmp_path))
    yield made
    made.close()


@pytest.fixture(params=BACKENDS)
def session_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    kind = request.param
    made: SessionStore
    if kind == "memory":
        made = InMemorySessionStore()
    elif kind == "sqlite":
        made = SQLiteSessionStore(tmp_path / "sessions.db")
    else:
        from deskwork.store.postgres import PostgresSessionStore

        made = PostgresSessionStore(_url_for(kind, request, tmp_path))
    yield made
    made.close()


@pytest.fixture(params=BACKENDS)
def memory_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    kind = request.param
    made: MemoryStore
    if kind == "memory":
        made = InMemoryMemoryStore()
    elif kind == "sqlite":
        made = SQLiteMemoryStore(tmp_path / "memory.db")
    else:
        from deskwork.memory.postgres import PostgresMemoryStore

        made = PostgresMemoryStore(_url_for(kind, request, tmp_path))
    yield made
    close = getattr(made, "close", None)
    if close is not None:
        close()
