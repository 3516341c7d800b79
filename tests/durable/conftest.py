"""Helpers of the durable-run tests: the subprocess application and its directory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from deskwork.store._url import open_run_store
from deskwork.store.base import RunStore

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

HERE = Path(__file__).parent
PYTHON = sys.executable


def app_env(directory: Path, **extra: str) -> dict[str, str]:
    """The environment of a subprocess running ``durable_app``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKWORK_", "DBOS"))}
    env.update(
        DURABLE_DIR=str(directory),
        PYTHONPATH=os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]),
        **extra,
    )
    return env


def run_app(directory: Path, *args: str, timeout: float = 60, **env: str) -> str:
    """Run ``durable_app.py ARGS`` to completion; its stdout."""
    done = subprocess.run(
        [PYTHON, str(HERE / "durable_app.py"), *args],
        env=app_env(directory, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def wait_for(condition: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
    """Poll ``condition`` until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


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


def open_store(directory: Path, backend: dict[str, str]) -> RunStore:
    """The run store the application of ``directory`` used."""
    sqlite = f"sqlite:///{directory / '.deskwork' / 'deskwork.db'}"
    return open_run_store(backend.get("DESKWORK_DATABASE_URL") or sqlite)
