"""A durable application whose run is cancelled from another process just after its model
step was recorded: ``python cancel_app.py submit-and-cancel RUN_ID`` (the cancelling process;
``deskwork worker cancel_app:desk --queue jobs`` runs the run).

Its directory is ``$DURABLE_DIR``: once the run's first model step is recorded (its
``llm.completed``) the worker writes ``held`` there and waits for ``go``; it writes
``ended-RUN_ID`` once the run's workflow has returned or raised (so a test knows the worker
stored all it was going to). DBOS stops a cancelled workflow only at its next step: the
run goes on between the two.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deskwork import Desk, Event, Worker
from deskwork.runtime import _durable
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HERE = Path(os.environ.get("DURABLE_DIR", "."))


@tool
def add_numbers(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _wait_for(name: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (HERE / name).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} never came")
        time.sleep(0.02)


def _hold(event: Event) -> None:
    """The first model step is recorded: the run goes on once the test says ``go``."""
    if not (HERE / "held").exists():
        (HERE / "held").write_text(str(os.getpid()))
        _wait_for("go")


_execute = _durable._execute


async def _marked(request: dict[str, Any]) -> dict[str, Any]:
    """The workflow's body, then the ``ended-RUN_ID`` mark (returned or raised)."""
    try:
        return await _execute(request)
    finally:
        (HERE / f"ended-{request['run_id']}").write_text(str(os.getpid()))


_durable._execute = _marked  # type: ignore[assignment]  # _run_workflow calls it by name

adder = Worker(name="adder", tools=[add_numbers])
desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=lambda messages, _tools: (
        reply("three") if messages[-1]["role"] == "tool" else call_tool("add_numbers", a=1, b=2)
    )),
    storage_dir=HERE / ".deskwork",
    durable=True,
)  # fmt: skip
desk.register(adder)
desk.event_bus.subscribe("llm.completed", _hold)


def main(argv: list[str]) -> None:
    if argv[0] == "submit-and-cancel":  # serves no queue: a worker runs it
        run_id = desk.submit(adder, "add 1 and 2", queue="jobs", run_id=argv[1])
        _wait_for("held")
        desk.cancel(run_id)  # the run's end is stored here, in this process
        (HERE / "go").write_text("go")  # the worker's run goes on after it ended
        report = desk.result(run_id, timeout=60)
        print(json.dumps({"status": report.status, "errors": report.errors}))
    desk.close()


if __name__ == "__main__":
    main(sys.argv[1:])
