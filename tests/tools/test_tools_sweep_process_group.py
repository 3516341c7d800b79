"""``isolation="process"``: cancelling a call kills the processes the tool started too."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deskwork.core.tool_call import ToolCall
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _start_sleeper(pid_file: str) -> None:
    child = subprocess.Popen(SLEEPER)
    partial = Path(pid_file + ".partial")
    partial.write_text(str(child.pid))
    partial.replace(pid_file)  # in one step: never an empty file to read


@tool(timeout=60, isolation="process")
def runs_a_job(pid_file: str) -> str:
    """Starts a long job and waits for it (only cancelling stops the call)."""
    _start_sleeper(pid_file)
    time.sleep(60)
    return "late"


@tool(timeout=60, isolation="process")
def starts_a_server(pid_file: str) -> str:
    """Starts a process meant to outlive the call, and answers."""
    _start_sleeper(pid_file)
    return "started"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


async def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not _alive(pid)


async def test_a_cancelled_call_kills_the_process_the_tool_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    call = ToolCall(id="c1", name="runs_a_job", arguments={"pid_file": str(pid_file)})
    cancel = asyncio.Event()
    task = asyncio.ensure_future(aexecute_tool(runs_a_job, call, cancel_event=cancel))
    deadline = time.monotonic() + 30  # a loaded machine may take seconds to start a process
    while not pid_file.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert pid_file.exists()
    cancel.set()
    result = await task
    assert result.cancelled
    grandchild = int(pid_file.read_text())
    try:
        assert await _gone(grandchild)
    finally:
        if _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


async def test_a_call_that_answers_leaves_what_it_started_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    call = ToolCall(id="c1", name="starts_a_server", arguments={"pid_file": str(pid_file)})
    result = await aexecute_tool(starts_a_server, call)
    assert result.content == "started"
    server = int(pid_file.read_text())
    try:
        await asyncio.sleep(0.3)
        assert _alive(server)
    finally:
        os.kill(server, signal.SIGKILL)
