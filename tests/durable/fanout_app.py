"""The application of the fan-out tests: ``deskwork worker fanout_app:desk --queue fanout``
processes run the members; ``python fanout_app.py run RUNNER...`` runs ``team`` (a
collaborate workforce), ``spread`` (a flow of one ``Parallel``) or ``crew`` (a collaborate
workforce of slow members) from a process that serves no queue, and prints the reports;
``python fanout_app.py finish RUNNER`` recovers and waits for its latest run.

Its directory is ``$DURABLE_DIR``. Each of the four members asks the model (0.15 s), calls
the tool ``mark`` once, then answers (1 s; 1.5 s for the crew's members). ``mark`` logs
the member and its process in ``marks``; each answer is logged in ``answers`` as it starts.
The members of ``team`` and ``spread`` answer in 1 s: longer than an idle worker's longest
wait between polls (0.45 s), so while one worker's two slots are busy the other worker
claims the other two members, instead of the first worker taking them as its runs end.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from deskwork import Desk, Report, Worker, Workforce
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.workflow import Parallel, Step

HERE = Path(os.environ.get("DURABLE_DIR", "."))
LATENCY = 0.15
SLOW_ANSWER = 1.5
SPREAD_ANSWER = 1.0


def _log(name: str, line: str) -> None:
    with (HERE / name).open("a") as handle:  # one short append: atomic across processes
        handle.write(line + "\n")


@tool
def mark(member: str) -> str:
    """The member's side effect: one line per call."""
    _log("marks", f"{member} {os.getpid()}")
    return f"marked {member}"


def _model(messages: list[dict[str, Any]], tools: Any) -> Any:
    member = str(messages[0].get("content", "")).split("\n")[0]
    if not any(m.get("role") == "tool" for m in messages):
        return call_tool("mark", member=member)
    _log("answers", f"{member} {os.getpid()}")
    latency = SLOW_ANSWER if member.startswith("c") else SPREAD_ANSWER
    return reply(f"{member} done by {os.getpid()}", latency=latency)


desk = Desk(
    model="scripted",
    adapter=ScriptedAdapter(default=_model, latency=LATENCY),
    storage_dir=HERE / ".deskwork",
    durable=True,
)


def _members(prefix: str) -> list[Worker]:
    return [
        Worker(name=f"{prefix}{n}", instructions=f"{prefix}{n}", tools=[mark]) for n in range(1, 5)
    ]


team = Workforce(_members("m"), mode="collaborate", name="team", distribute="fanout")
spread = desk.flow(
    [Parallel(*(Step(w) for w in _members("b")), name="branches", distribute="fanout")],
    name="spread",
)
crew = Workforce(_members("c"), mode="collaborate", name="crew", distribute="fanout")
desk.register(team)
desk.register(spread)
desk.register(crew)
RUNNERS = {"team": team, "spread": spread, "crew": crew}


def _out(reports: list[Report]) -> str:
    fields = ("run_id", "status", "content", "data", "errors", "metrics")
    out = [{name: getattr(report, name) for name in fields} for report in reports]
    for item, report in zip(out, reports, strict=True):
        item["events"] = [[e.type, e.payload] for e in report.events]
    return json.dumps(out, default=str)


def main(argv: list[str]) -> None:
    if argv[0] == "run":  # run RUNNER...: run each here (members on the workers), print them
        print(_out([desk.run(RUNNERS[name], "go") for name in argv[1:]]), flush=True)
    elif argv[0] == "finish":  # finish RUNNER: recover, then wait for its latest run
        desk.recover()  # (a live worker may have taken the run over already)
        [record] = desk.run_store.list_runs(1, runner=argv[1])
        print(_out([desk.result(record.run_id, timeout=60)]), flush=True)
    desk.close()


if __name__ == "__main__":
    main(sys.argv[1:])
