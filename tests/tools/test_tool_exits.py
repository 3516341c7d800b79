"""A tool that calls ``sys.exit()`` (argparse does on bad arguments) fails its call: the run
goes on, the model is told. A ``KeyboardInterrupt`` still stops the call that was running,
and leaves nothing behind for the thread's next sync call."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.event import EventType
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import Tool, tool

EXITED = "raised SystemExit(2) (sys.exit or argparse): a tool call cannot end the program"


def _parse(flags: str) -> str:
    parser = argparse.ArgumentParser(prog="report")
    parser.add_argument("--days", type=int, required=True)
    return str(parser.parse_args(flags.split()).days)


@tool
def report_sync(flags: str) -> str:
    return _parse(flags)


@tool(timeout=30)
def report_pooled(flags: str) -> str:
    return _parse(flags)


@tool
async def report_async(flags: str) -> str:
    return _parse(flags)


@tool(isolation="process", timeout=60)
def report_process(flags: str) -> str:
    sys.exit(2)


def _desk(*turns: Any) -> Desk:
    return Desk(
        model="scripted/model",
        adapter=ScriptedAdapter(list(turns), default=reply("done")),
        run_store=InMemoryRunStore(),
        storage_dir=".deskwork-unused",
    )


@pytest.mark.parametrize("exits", [report_sync, report_pooled, report_async, report_process])
def test_a_tool_calling_sys_exit_fails_its_call_and_the_run_goes_on(
    exits: Tool, capsys: pytest.CaptureFixture[str]
) -> None:
    desk = _desk(call_tool(exits.name, flags="--days x"))
    report = desk.run(Worker(name="w", tools=[exits]), Job(input="report"))
    assert report.status == "completed" and report.content == "done"
    (call,) = report.tool_calls
    assert call.result is not None and call.result.error == f"tool {exits.name!r} {EXITED}"
    assert call.result.exception_type == "SystemExit"
    failed = [
        e for e in desk.run_store.get_events(report.run_id) if e.type == EventType.TOOL_FAILED
    ]
    assert [e.payload["error"] for e in failed] == [call.result.error]
    later = _desk().run(Worker(name="w"), Job(input="again"))
    assert later.status == "completed"


def test_a_hook_calling_sys_exit_fails_the_call() -> None:
    @tool(pre=(lambda call: sys.exit("no"),))
    def guarded(x: int) -> int:
        return x

    report = _desk(call_tool("guarded", x=1)).run(
        Worker(name="w", tools=[guarded]), Job(input="go")
    )
    assert report.status == "completed"
    (call,) = report.tool_calls
    assert call.result is not None and call.result.error is not None
    assert call.result.error.startswith("pre-hook") and call.result.exception_type == "SystemExit"


def test_ctrl_c_in_a_tool_stops_the_run_and_not_the_next_one() -> None:
    @tool
    async def stops(x: int) -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _desk(call_tool("stops", x=1)).run(Worker(name="w", tools=[stops]), Job(input="go"))
    # was: the interrupted run's task, still on the thread's loop, woke up in this call and
    # raised the same KeyboardInterrupt again
    later = _desk().run(Worker(name="w"), Job(input="again"))
    assert later.status == "completed" and later.content == "done"
