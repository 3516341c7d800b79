"""A graph interrupted in one process is resumed by another from the same SQLite file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from deskwork import Desk
from deskwork.testing import ScriptedAdapter

GRAPH = textwrap.dedent(
    """
    import json, operator, sys
    from typing import Annotated, TypedDict
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt
    from deskwork import Desk, Job
    from deskwork.graph.runner import GraphRunner
    from deskwork.testing import ScriptedAdapter  # no model calls: skip loading LiteLLM

    class State(TypedDict):
        log: Annotated[list[str], operator.add]

    def plan(state):
        return {"log": ["plan"]}

    def approve(state):
        return {"log": ["approved:" + interrupt({"prompt": "Approve the plan?"})]}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("approve", approve)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", END)
    runner = GraphRunner(builder.compile(), name="approval")

    with Desk(storage_dir=sys.argv[1], adapter=ScriptedAdapter()) as desk:
        if sys.argv[2] == "start":
            report = desk.run(runner, Job(input={"log": []}))
        else:
            report = desk.resume(sys.argv[3], sys.argv[4], runner=runner)
    print(json.dumps({"run_id": report.run_id, "status": report.status, "data": report.data,
                      "prompt": report.pending_action.prompt if report.pending_action else None,
                      "errors": report.errors}))
    """
)


def _run(script: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_new_process_resumes_the_interrupted_graph(tmp_path: Path) -> None:
    script = tmp_path / "graph_app.py"
    script.write_text(GRAPH)
    storage = tmp_path / ".deskwork"
    first = _run(script, str(storage), "start")
    assert first["status"] == "paused", first["errors"]
    assert first["prompt"] == "Approve the plan?"
    run_id = str(first["run_id"])

    second = _run(script, str(storage), "resume", run_id, "yes")
    assert second["status"] == "completed", second["errors"]
    assert second["data"] == {"log": ["plan", "approved:yes"]}

    with Desk(storage_dir=storage, adapter=ScriptedAdapter()) as desk:  # finished stays finished
        again = desk.resume(run_id, "no")
    assert again.status == "failed" and "not paused" in again.errors[0]

    with sqlite3.connect(storage / "deskwork.db") as conn:  # one file holds everything
        status = conn.execute("SELECT status FROM runs WHERE run_id=?", (run_id,)).fetchone()
        nodes = conn.execute(
            "SELECT payload FROM events WHERE run_id=? AND type='graph.node.completed'"
            " ORDER BY seq",
            (run_id,),
        ).fetchall()
        checkpoints = conn.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id=?", (run_id,)
        ).fetchone()
    assert status == ("completed",)
    assert [json.loads(row[0])["node"] for row in nodes] == ["plan", "approve"]  # plan ran once
    assert checkpoints[0] > 0
