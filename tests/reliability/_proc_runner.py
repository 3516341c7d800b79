"""A process that runs small tool-calling jobs on one SQLite store until it is killed.

Usage: ``python _proc_runner.py DB_PATH RUNS TAG``. Prints ``ready`` once the desk is open,
then ``<run_id> <status>`` after each run, flushed, so the parent knows which runs finished
before it killed the process.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.store import SQLiteRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tools, reply
from deskwork.tools import tool


@tool()
def step(n: int) -> str:
    """Do one small step of the job."""
    time.sleep(0.002)
    return f"step {n} done"


def _turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    if messages[-1]["role"] == "tool":
        return reply("done")
    return call_tools(("step", {"n": 1}), ("step", {"n": 2}))


def main() -> None:
    path, runs, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    desk = Desk(
        model="scripted",
        adapter=ScriptedAdapter(default=_turn),
        run_store=SQLiteRunStore(path),
        storage_dir=path.parent / f".deskwork-{tag}",
    )
    worker = Worker(name="stepper", tools=[step])
    print("ready", flush=True)
    for n in range(runs):
        report = desk.run(worker, f"{tag} job {n}")
        print(report.run_id, report.status, flush=True)


if __name__ == "__main__":
    main()
