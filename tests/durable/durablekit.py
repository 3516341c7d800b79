"""Helpers of the durable-run tests: the subprocess application (``durable_app``), its
directory and its run store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork.store._url import open_run_store
from deskwork.store.base import RunStore

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


def run_app(directory: Path, *args: str, timeout: float = 300, **env: str) -> str:
    """Run ``durable_app.py ARGS`` to completion; its stdout (a generous ``timeout``: on a
    loaded machine one start of the application alone has taken over 20 s)."""
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


def wait_for(condition: Callable[[], bool], timeout: float = 120, what: str = "") -> None:
    """Poll ``condition`` until it holds (at most ``timeout`` seconds, generous for a loaded
    CI machine: it returns as soon as the condition holds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def open_store(directory: Path, backend: dict[str, str]) -> RunStore:
    """The run store the application of ``directory`` used."""
    sqlite = f"sqlite:///{directory / '.deskwork' / 'deskwork.db'}"
    return open_run_store(backend.get("DESKWORK_DATABASE_URL") or sqlite)


def start_workers(
    directory: Path, target: str, count: int, *flags: str, **env: str
) -> list[subprocess.Popen[str]]:
    """``count`` ``python -m deskwork worker TARGET FLAGS`` processes, started together;
    returns once each says it serves its queue (stderr goes to ``worker.err`` files)."""
    procs = []
    for n in range(count):
        with (directory / f"worker-{n}.err").open("w") as err:
            procs.append(
                subprocess.Popen(
                    [PYTHON, "-m", "deskwork", "worker", target, *flags],
                    env=app_env(directory, **env),
                    stdout=subprocess.PIPE,
                    stderr=err,
                    text=True,
                )
            )
    for n, proc in enumerate(procs):
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "serving queue" in banner, (directory / f"worker-{n}.err").read_text()[-3000:]
    return procs


def stop_workers(procs: list[subprocess.Popen[str]], timeout: float = 20) -> None:
    """SIGTERM every live worker; kill the ones still there after ``timeout`` seconds."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()


def launched_system_database(
    request: pytest.FixtureRequest, directory: Path, **engine_options: Any
) -> Iterator[Any]:
    """For a fixture parametrized ``["sqlite", "postgres"]``: DBOS's system database of a
    durable desk on that backend, DBOS launched in this process (``engine_options`` go to
    ``engine_for``); the desk is closed afterwards."""
    from deskwork import Desk
    from deskwork.runtime._durable import _dbos, engine_for
    from deskwork.testing import ScriptedAdapter, reply

    url = (
        f"sqlite:///{directory / 'deskwork.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_database")
    )
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("x")]), database_url=url, durable=True)
    try:
        engine_for(desk, **engine_options)
        yield _dbos()._sys_db
    finally:
        desk.close()
