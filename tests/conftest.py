"""Test-suite wide fixtures, and what keeps the suite safe under ``pytest -n 2`` (xdist).

Tests own their resources (``tmp_path``, free ports, a fresh PostgreSQL database or schema of
a random name), so two workers share nothing but the PostgreSQL server's connections: a test
running DBOS on PostgreSQL in several processes holds up to ~55 of its 100 (DBOS's pool is
20 a process), and two such tests at once can exhaust them. So a worker runs such a test only
while no other worker runs one (a file lock of the run), and they are one ``xdist_group``
for ``--dist loadgroup`` (which pytest-xdist 3.8 ignores on pytest 9.2: it renames node ids
the old way, pytest-xdist#1386; the lock holds either way).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

DBOS_ON_POSTGRES = "dbos-on-postgres"
"""The ``xdist_group`` of the tests that run DBOS on a PostgreSQL database of their own."""


def _runs_dbos_on_postgres(item: pytest.Item) -> bool:
    """Whether ``item`` runs DBOS on PostgreSQL: it uses the durable tests' fresh database,
    or it is a durable test (``tests/durable``, the durable server's) with a postgres param."""
    if "postgres_database" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is None or "postgres" not in callspec.params.values():
        return False
    return item.path.parent.name == "durable" or item.path.name == "test_serve_durable.py"


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups (its own hook reads the marks)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _runs_dbos_on_postgres(item):
            item.add_marker(pytest.mark.xdist_group(DBOS_ON_POSTGRES))


@pytest.fixture(autouse=True)
def _dbos_on_postgres_alone(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Under xdist, a test running DBOS on PostgreSQL first waits until no other worker of
    this run runs one (an exclusive lock on a file in the run's shared temporary directory)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None or not _runs_dbos_on_postgres(request.node):
        yield
        return
    import fcntl

    lock = tmp_path_factory.getbasetemp().parent / "dbos-on-postgres.lock"  # popen-gwN's parent
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
async def _stop_litellm_logging_task(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Stop LiteLLM's background logging task before an async test's loop closes.

    LiteLLM starts that task on the loop of the first async call; left running, it is
    destroyed with the loop and Python prints a "Task was destroyed" warning at exit.
    """
    yield
    if sys.modules.get("litellm") is None:
        return
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    task = getattr(GLOBAL_LOGGING_WORKER, "_worker_task", None)
    if task is not None and task.get_loop() is asyncio.get_running_loop():
        await GLOBAL_LOGGING_WORKER.stop()


_LEFT_IN_CWD = ".deskwork"
"""What a default ``Desk()`` writes in the working directory: a test keeps it in ``tmp_path``."""


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_cwd_key] = os.path.exists(_LEFT_IN_CWD)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail a run in which a test wrote ``.deskwork/`` into the working directory (the
    checkout): it leaves a database behind that later runs and ``git status`` see."""
    if session.config.stash.get(_cwd_key, True) or not os.path.exists(_LEFT_IN_CWD):
        return
    session.config.get_terminal_writer().line(
        f"a test wrote {_LEFT_IN_CWD}/ into {os.getcwd()}: give its Desk storage_dir=tmp_path",
        red=True,
    )
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_cwd_key = pytest.StashKey[bool]()
