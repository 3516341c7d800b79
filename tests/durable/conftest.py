"""Fixtures of the durable-run tests: a fresh PostgreSQL database, and the backend matrix."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

_SERVER = os.environ.get("DESKWORK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
_unavailable: list[str] = []


def _admin_or_skip() -> Any:
    """A psycopg connection to the test server, or skip (fail when PostgreSQL is required)."""
    reason = _unavailable[0] if _unavailable else ""
    if not reason:
        try:
            import psycopg

            return psycopg.connect(_SERVER, autocommit=True, connect_timeout=3)
        except Exception as exc:
            reason = f"no PostgreSQL at {_SERVER}: {str(exc).strip().splitlines()[0]}"
        _unavailable.append(reason)
    if os.environ.get("DESKWORK_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"DESKWORK_REQUIRE_POSTGRES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """The URL of a fresh database on the test server (dropped afterwards)."""
    admin = _admin_or_skip()
    name = f"deskwork_durable_{uuid.uuid4().hex[:12]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(_SERVER)._replace(path=f"/{name}"))
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """Environment for the subprocess application: its database (SQLite or PostgreSQL)."""
    if request.param == "sqlite":
        return {}
    url: str = request.getfixturevalue("postgres_database")
    return {"DESKWORK_DATABASE_URL": url}
