"""The application of the scale-out tests: ``deskwork worker scaleout_app:desk`` processes
serve it; ``python scaleout_app.py submit N QUEUE`` queues N jobs from a process that runs
none.

Its directory is ``$DURABLE_DIR``. Job ``n`` calls the tool ``effect(n)`` once (the model
answers after a 20 ms latency). The tool's side effect is keyed by ``n`` (a file created
once in ``effects/``), and every call of it is logged in ``attempts``; every model call is
logged in ``model_calls`` with its time, process, job and turn (``first``/``last``). With
``$SCALEOUT_TOOL_SECONDS`` the tool takes that long, and logs its span in ``spans``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HERE = Path(os.environ.get("DURABLE_DIR", "."))


def _log(name: str, line: str) -> None:
    with (HERE / name).open("a") as handle:  # one short append: atomic across processes
        handle.write(line + "\n")


@tool
def effect(n: int) -> str:
    """Job ``n``'s side effect: created once, however often the call runs."""
    _log("attempts", f"{n} {os.getpid()}")
    (HERE / "effects").mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):  # created once, never overwritten
        os.close(os.open(HERE / "effects" / str(n), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    seconds = float(os.environ.get("SCALEOUT_TOOL_SECONDS", "0"))
    if seconds:  # a slow tool: its span is logged in ``spans``
        began = time.time()
        time.sleep(seconds)
        _log("spans", f"{began:.3f} {time.time():.3f} {os.getpid()}")
    return f"effect {n}"


def _model(messages: list[dict[str, Any]], tools: Any) -> Any:
    user = next(m for m in messages if m.get("role") == "user")
    n = int(str(user["content"]).split()[-1])
    answered = any(m.get("role") == "tool" for m in messages)
    _log("model_calls", f"{time.time():.3f} {os.getpid()} {n} {'last' if answered else 'first'}")
    return reply(f"finished {n}") if answered else call_tool("effect", n=n)


desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=_model, latency=0.02),
    storage_dir=HERE / ".deskwork",
    durable=True,
)
jobs = Worker(name="jobs", tools=[effect])
desk.register(jobs)


def main(argv: list[str]) -> None:
    if argv[0] == "submit":  # submit N QUEUE: queue N jobs, print their run ids
        count, queue = int(argv[1]), argv[2]
        ids = [desk.submit(jobs, f"job {n}", queue=queue) for n in range(count)]
        print(json.dumps(ids))
    elif argv[0] == "cancel":  # cancel RUN_ID...: cancel each, print their statuses
        for run_id in argv[1:]:
            desk.cancel(run_id)
        print(json.dumps([desk.result(run_id, timeout=30).status for run_id in argv[1:]]))
    desk.close()


if __name__ == "__main__":
    main(sys.argv[1:])
