"""A durable run paused for approval is resumed from any process sharing the database, once."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from durablekit import HERE, PYTHON, app_env, lines, open_store, run_app, wait_for


def _last_json(out: str) -> object:
    return json.loads(out.strip().splitlines()[-1])


def test_two_processes_resume_one_pause_and_the_tool_runs_once(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    assert _last_json(run_app(tmp_path, "run", "p-1", "approver", **backend)) == {
        "status": "paused"
    }
    procs = [
        subprocess.Popen(
            [PYTHON, str(HERE / "durable_app.py"), "resume", "p-1", "approve"],
            env=app_env(tmp_path, **backend),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err[-2000:] for _, err in outs]
    reports = [_last_json(out) for out, _ in outs]

    assert len(lines(tmp_path / "launch")) == 1
    assert len(lines(tmp_path / "step_one")) == 1
    completed = [r for r in reports if r["status"] == "completed"]  # type: ignore[index]
    assert completed and completed[0]["content"] == "approved and done"  # type: ignore[index]
    for report in reports:  # the other shared that resume, or was told the run is not paused
        # (read after the winner ended it: "... is completed, not paused"; its claim lost to
        # the winner's: "... is no longer paused")
        assert report in completed or re.search(r"not paused|no longer paused", str(report))
    store = open_store(tmp_path, backend)
    try:
        types = [e.type for e in store.get_events("p-1")]
        record = store.get_run("p-1")
    finally:
        store.close()
    assert record is not None and record.status == "completed"
    assert types.count("run.resumed") == 1 and types.count("run.paused") == 1
    assert types[-1] == "run.completed"
    # once: a later resume is refused
    again = _last_json(run_app(tmp_path, "resume", "p-1", "approve", **backend))
    assert again["status"] == "failed" and "not paused" in str(again["errors"])  # type: ignore[index]


def test_a_resume_killed_mid_tool_is_recovered(tmp_path: Path) -> None:
    run_app(tmp_path, "run", "p-2", "approver")
    proc = subprocess.Popen(
        [PYTHON, str(HERE / "durable_app.py"), "resume", "p-2", "approve"],
        env=app_env(tmp_path, LAUNCH_HANGS="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: lines(tmp_path / "launch") != [], what="the approved tool to start")
    finally:
        proc.kill()
        proc.wait(timeout=10)

    reports = _last_json(run_app(tmp_path, "recover"))

    assert reports == [{"run_id": "p-2", "status": "completed", "content": "approved and done"}]
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "launch")) == 2  # the interrupted call ran again, once
    store = open_store(tmp_path, {})
    try:
        types = [e.type for e in store.get_events("p-2")]
    finally:
        store.close()
    assert types.count("run.resumed") == 1 and types.count("run.recovered") == 1
    assert types.count("tool.completed") == 2 and types[-1] == "run.completed"
