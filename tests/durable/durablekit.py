"""Helpers of the durable-run tests: the subprocess application (``durable_app``), its
directory and its run store."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def open_store(directory: Path, backend: dict[str, str]) -> RunStore:
    """The run store the application of ``directory`` used."""
    sqlite = f"sqlite:///{directory / '.deskwork' / 'deskwork.db'}"
    return open_run_store(backend.get("DESKWORK_DATABASE_URL") or sqlite)
