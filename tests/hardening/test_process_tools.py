"""``@tool(isolation="process")``: a sync tool that times out is killed, not abandoned."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.tool_call import ToolCall
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tools, reply
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool

TIMEOUT = 2.0
"""Long enough for a new process to start (an interpreter importing this module)."""


def _record_pid(pid_file: str) -> None:
    """Write this process's pid to ``pid_file`` in one step (a rename): a process killed
    while writing would leave an empty file for the test to read."""
    partial = Path(pid_file + ".partial")
    partial.write_text(str(os.getpid()))
    partial.replace(pid_file)


@tool(timeout=TIMEOUT, isolation="process")
def runaway(pid_file: str, marker: str) -> str:
    """Records its pid, then works far longer than its timeout allows."""
    _record_pid(pid_file)
    time.sleep(60)
    Path(marker).write_text("finished")  # never reached: the process is killed
    return "late"


@tool(timeout=60, isolation="process")
def stubborn(pid_file: str, marker: str) -> str:
    """Like ``runaway``, with a timeout long enough that only cancelling can stop it."""
    _record_pid(pid_file)
    time.sleep(60)
    Path(marker).write_text("finished")  # never reached: the process is killed
    return "late"


@tool(isolation="process")
def square(n: int) -> dict[str, int]:
    """Returns a picklable value from another process."""
    if n < 0:
        raise ValueError("negative")
    return {"n": n, "square": n * n, "pid": os.getpid()}


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().split()[2] != "Z"  # a zombie has stopped running
    except (FileNotFoundError, ProcessLookupError):
        return False


async def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not _alive(pid)


def _runaway_call(tmp_path: Path, name: str = "runaway") -> tuple[ToolCall, Path, Path]:
    pid_file, marker = tmp_path / "pid", tmp_path / "marker"
    arguments = {"pid_file": str(pid_file), "marker": str(marker)}
    return ToolCall(id="c1", name=name, arguments=arguments), pid_file, marker


async def test_a_cancelled_process_tool_is_killed(tmp_path: Path) -> None:
    call, pid_file, marker = _runaway_call(tmp_path, "stubborn")
    cancel = asyncio.Event()
    task = asyncio.ensure_future(aexecute_tool(stubborn, call, cancel_event=cancel))
    deadline = time.monotonic() + 30  # a loaded machine may take seconds to start a process
    while not pid_file.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    cancel.set()
    result = await task
    assert result.cancelled
    if pid_file.exists():  # the process got as far as starting the work
        assert await _gone(int(pid_file.read_text()))
    assert not marker.exists()


async def test_a_timed_out_process_tool_is_killed(tmp_path: Path) -> None:
    call, pid_file, marker = _runaway_call(tmp_path)
    started = time.perf_counter()
    result = await aexecute_tool(runaway, call)
    assert result.timed_out
    assert time.perf_counter() - started < TIMEOUT + 8  # far below the 60 s of work
    if pid_file.exists():
        assert await _gone(int(pid_file.read_text()))
    assert not marker.exists()


def test_a_process_tool_returns_its_value_through_a_run() -> None:
    adapter = ScriptedAdapter([call_tools(("square", {"n": 7})), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[square]), Job(input="go"))
    assert report.status == "completed"
    result = report.tool_calls[0].result
    assert result is not None and result.data is not None
    assert result.data["square"] == 49 and result.data["pid"] != os.getpid()


async def test_what_a_process_tool_raises_is_its_error() -> None:
    result = await aexecute_tool(square, ToolCall(id="c", name="square", arguments={"n": -1}))
    assert result.error == "ValueError: negative"
    assert result.exception_type == "ValueError"


def test_process_isolation_rejects_what_a_new_process_cannot_run() -> None:
    def local() -> str:
        return "x"

    with pytest.raises(ValueError, match="module level"):
        tool(isolation="process")(local)

    async def coro() -> str:
        return "x"

    with pytest.raises(ValueError, match="sync"):
        tool(isolation="process")(coro)
    with pytest.raises(ValueError, match="isolation must be"):
        tool(isolation="fork")(local)  # type: ignore[call-overload]
