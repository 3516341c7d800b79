"""Helpers of the fault tests: run ``durable_faults_app.py`` (or a copy of it) in a
subprocess, to completion or until it is killed."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from durablekit import HERE, PYTHON, app_env, lines, wait_for

APP = HERE / "durable_faults_app.py"


def run_faults_app(directory: Path, *args: str, app: Path = APP, **env: str) -> Any:
    """Run the application with ``ARGS`` to completion; the JSON of its last output line."""
    done = subprocess.run(
        [PYTHON, str(app), *args],
        env=app_env(directory, **env),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def kill_during(directory: Path, marker: str, *args: str, app: Path = APP, **env: str) -> None:
    """Start the application with ``ARGS`` and ``kill -9`` it once the side-effect file
    ``marker`` has a line (the call that hangs has started)."""
    proc = subprocess.Popen(
        [PYTHON, str(app), *args],
        env=app_env(directory, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(
            lambda: lines(directory / marker) != [] or proc.poll() is not None,
            timeout=60,
            what=f"{marker} to start",
        )
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:] if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
