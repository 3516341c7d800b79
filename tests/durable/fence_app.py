"""The application of the fence test: ``deskwork worker fence_app:desk`` processes serve it;
``python fence_app.py submit N QUEUE`` queues N jobs from a process that runs none.

Its directory is ``$DURABLE_DIR``. Job ``n`` calls the tool ``effect(n, k)`` for k = 0, 1, 2,
one after the other, each taking ``$FENCE_TOOL_SECONDS`` (default 1); then the model answers.
Each call's side effect is keyed by ``n-k`` (a file created once in ``effects/``), and every
call is logged in ``attempts`` (``n k pid``).
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
CALLS = 3


@tool
def effect(n: int, k: int) -> str:
    """Job ``n``'s side effect number ``k``: created once, however often the call runs."""
    with (HERE / "attempts").open("a") as log:  # one short append: atomic across processes
        log.write(f"{n} {k} {os.getpid()}\n")
    (HERE / "effects").mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(HERE / "effects" / f"{n}-{k}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    time.sleep(float(os.environ.get("FENCE_TOOL_SECONDS", "1")))
    return f"effect {n}-{k}"


def _model(messages: list[dict[str, Any]], tools: Any) -> Any:
    user = next(m for m in messages if m.get("role") == "user")
    n = int(str(user["content"]).split()[-1])
    done = sum(1 for m in messages if m.get("role") == "tool")
    return reply(f"finished {n}") if done == CALLS else call_tool("effect", n=n, k=done)


desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=_model),
    storage_dir=HERE / ".deskwork",
    durable=True,
)
jobs = Worker(name="jobs", tools=[effect])
desk.register(jobs)


if __name__ == "__main__":
    if sys.argv[1] == "submit":  # submit N QUEUE: queue N jobs, print their run ids
        count, queue = int(sys.argv[2]), sys.argv[3]
        print(json.dumps([desk.submit(jobs, f"job {n}", queue=queue) for n in range(count)]))
    desk.close()
