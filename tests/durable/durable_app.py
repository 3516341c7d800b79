"""A durable application for the subprocess tests: ``python durable_app.py COMMAND``.

Its directory is ``$DURABLE_DIR``; side effects are counted in files there. Runners are
registered at import, as a real application (and ``deskwork worker durable_app:desk``) does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker, Workforce
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.workflow import Step

HERE = Path(os.environ.get("DURABLE_DIR", "."))


def _count(name: str) -> int:
    """Append one line to ``HERE/name``; the number of lines so far."""
    path = HERE / name
    with path.open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    return len(path.read_text().splitlines())


@tool
def step_one() -> str:
    """The first side effect."""
    _count("step_one")
    return "one done"


@tool
def step_two() -> str:
    """The second side effect: its first call hangs (the test kills the process then)."""
    if _count("step_two") == 1:
        time.sleep(60)
    return "two done"


@tool
def work(n: int) -> str:
    """A quick job (``$WORK_SECONDS``, default 0.05 s); records which process ran it."""
    _count(f"work-{n}")
    (HERE / "pids").open("a").write(f"{n} {os.getpid()}\n")
    time.sleep(float(os.environ.get("WORK_SECONDS", "0.05")))
    return f"worked {n}"


@tool(requires_confirmation=True)
def launch() -> str:
    """Needs a person's approval; hangs once when ``$LAUNCH_HANGS`` is set."""
    if _count("launch") == 1 and os.environ.get("LAUNCH_HANGS"):
        time.sleep(60)
    return "launched"


def _model(messages: list[dict[str, Any]], tools: Any) -> Any:
    """Answers from the conversation alone (a restarted process has no script position)."""
    _count("model_calls")
    done = sum(1 for m in messages if m.get("role") == "tool")
    who = str(messages[0].get("content", "")).split("\n")[0]
    if who == "approver":
        return [call_tool("step_one"), call_tool("launch"), reply("approved and done")][
            min(done, 2)
        ]
    if who in ("first", "second"):  # the members of the flow and of the workforce
        step = call_tool("step_one") if who == "first" else call_tool("step_two")
        return step if done == 0 else reply(f"{who} done")
    user = next(m for m in messages if m.get("role") == "user")
    if "queued" in str(user.get("content")):
        n = int(str(user["content"]).split()[-1])
        return call_tool("work", n=n) if done == 0 else reply(f"finished {n}")
    return [call_tool("step_one"), call_tool("step_two"), reply("all done")][min(done, 2)]


desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=_model),
    storage_dir=HERE / ".deskwork",
    durable=True,
)
crasher = Worker(name="crasher", tools=[step_one, step_two])
queued = Worker(name="queued", tools=[work])
desk.register(crasher)
desk.register(queued)
first = Worker(name="first", instructions="first", tools=[step_one])
second = Worker(name="second", instructions="second", tools=[step_two])
pipeline = desk.flow([Step(first), Step(second)], name="pipeline")
team = Workforce([first, second], mode="collaborate", name="team")
desk.register(pipeline)
desk.register(team)
approver = Worker(name="approver", instructions="approver", tools=[step_one, launch])
desk.register(approver)
RUNNERS = {"crasher": crasher, "pipeline": pipeline, "team": team, "approver": approver}


def main(argv: list[str]) -> None:
    command = argv[0]
    if command == "run":  # run RUN_ID [RUNNER]
        runner = RUNNERS[argv[2] if len(argv) > 2 else "crasher"]
        report = desk.run(runner, "do both steps", run_id=argv[1])
        print(json.dumps({"status": report.status}))
    elif command == "resume":  # resume RUN_ID DECISION
        report = desk.resume(argv[1], argv[2])
        print(
            json.dumps(
                {"status": report.status, "content": report.content, "errors": report.errors}
            )
        )
    elif command == "enqueue":  # enqueue RUN_ID RUNNER QUEUE: queue one run, do not wait
        desk.submit(RUNNERS[argv[2]], "do both steps", queue=argv[3], run_id=argv[1])
    elif command == "prioritised":  # prioritised QUEUE P0 P1 ...: job n gets priority Pn
        for n, priority in enumerate(argv[2:]):
            desk.submit(queued, f"queued job {n}", queue=argv[1], priority=int(priority))
    elif command == "cancel":  # cancel RUN_ID
        desk.cancel(argv[1])
        print(json.dumps({"status": desk.result(argv[1], timeout=30).status}))
    elif command == "recover":
        if len(argv) > 1 and argv[1] == "--unregistered":
            desk.unregister(crasher)
        reports = desk.recover()
        print(
            json.dumps(
                [{"run_id": r.run_id, "status": r.status, "content": r.content} for r in reports]
            )
        )
    elif command == "submit":  # submit N [QUEUE]: queue N runs, wait for their reports
        queue = argv[2] if len(argv) > 2 else "default"
        ids = [desk.submit(queued, f"queued job {n}", queue=queue) for n in range(int(argv[1]))]
        reports = [desk.result(run_id, timeout=60) for run_id in ids]
        print(json.dumps([[r.run_id, r.status, r.content] for r in reports]))
    desk.close()


if __name__ == "__main__":
    main(sys.argv[1:])
