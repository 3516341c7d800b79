"""Two processes starting the same caller-chosen run id: exactly one runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from deskwork.store import SQLiteRunStore

SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from deskwork import Desk, Job, Worker
    from deskwork.exceptions import ConfigurationError
    from deskwork.store import SQLiteRunStore
    from deskwork.testing import ScriptedAdapter, reply

    store = SQLiteRunStore(sys.argv[1])
    desk = Desk(model="s/m", adapter=ScriptedAdapter([reply(sys.argv[2])]), run_store=store)
    # both processes pass the desk's quick "does this id exist?" check before either records it
    real_get_run = store.get_run
    store.get_run = lambda run_id: None
    while time.time() < float(sys.argv[3]):
        time.sleep(0.001)
    try:
        report = desk.run(Worker(name="w"), Job(input="go"), run_id="order-42")
        print(json.dumps({"status": report.status, "content": report.content}))
    except ConfigurationError as exc:
        print(json.dumps({"rejected": str(exc)}))
    """
)


def test_only_one_of_two_racing_processes_runs_a_chosen_id(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    SQLiteRunStore(db)  # create the schema first

    start_at = str(time.time() + 1.5)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(db), name, start_at],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-1500:] for _, err in outs]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    winners = [r for r in results if r.get("status") == "completed"]
    losers = [r for r in results if "rejected" in r]
    assert len(winners) == 1 and len(losers) == 1, results
    assert "already exists" in losers[0]["rejected"]
    record = SQLiteRunStore(db).get_run("order-42")
    assert record is not None and record.output == winners[0]["content"]
