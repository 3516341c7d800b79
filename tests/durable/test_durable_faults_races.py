"""Races over one durable run: two processes recover it at once, and a resume races a
recovery. Either way the run ends once and a finished tool call never runs again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from durablekit import HERE, PYTHON, app_env, lines, open_store, run_app, wait_for
from faultkit import APP, kill_during


def _start(directory: Path, app: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, str(app), *args],
        env=app_env(directory, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(procs: list[subprocess.Popen[str]]) -> list[Any]:
    outs = [proc.communicate(timeout=90) for proc in procs]
    assert [p.returncode for p in procs] == [0] * len(procs), [e[-2000:] for _, e in outs]
    return [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]


def _types(directory: Path, run_id: str, backend: dict[str, str]) -> list[str]:
    store = open_store(directory, backend)
    try:
        record = store.get_run(run_id)
        assert record is not None
        return [*(e.type for e in store.get_events(run_id)), f"status:{record.status}"]
    finally:
        store.close()


def test_two_processes_recovering_one_run_at_once_run_it_once(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    kill_during(tmp_path, "step_two", "run", "race-1", **backend)

    results = _finish([_start(tmp_path, APP, "recover", **backend) for _ in range(2)])

    done = {"run_id": "race-1", "status": "completed", "content": "all done"}
    assert all(result in ([], [done]) for result in results), results
    assert [done] in results  # one of them (or both, waiting for the same workflow)
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "step_two")) == 2  # the interrupted call, then once more
    assert len(lines(tmp_path / "model_calls")) == 3
    types = _types(tmp_path, "race-1", backend)
    assert types.count("run.recovered") == 1 and types.count("tool.completed") == 2
    assert types[-2:] == ["run.completed", "status:completed"]


def test_a_resume_racing_a_recovery_continues_the_pause_once(tmp_path: Path) -> None:
    """A resume died in the approved tool; a second resume and a recovery start together.
    The recovery finishes the claimed resume; the second resume is told the run is no
    longer paused (or shares that workflow): the approved tool runs once more, not twice."""
    app = HERE / "durable_app.py"
    run_app(tmp_path, "run", "p-race", "approver")
    resume = _start(tmp_path, app, "resume", "p-race", "approve", LAUNCH_HANGS="1")
    try:
        wait_for(lambda: lines(tmp_path / "launch") != [], what="the approved tool to start")
    finally:
        resume.kill()
        resume.communicate(timeout=10)

    recovered, resumed = _finish(
        [_start(tmp_path, app, "recover"), _start(tmp_path, app, "resume", "p-race", "approve")]
    )

    assert len(lines(tmp_path / "launch")) == 2  # the interrupted call, then once
    assert len(lines(tmp_path / "step_one")) == 1
    done = {"run_id": "p-race", "status": "completed", "content": "approved and done"}
    assert recovered in ([done], [])
    assert resumed["status"] == "completed" or "not paused" in str(resumed["errors"])
    assert done in recovered or resumed["status"] == "completed"
    types = _types(tmp_path, "p-race", {})
    assert types.count("run.resumed") == 1 and types.count("run.completed") == 1
    assert types[-2:] == ["run.completed", "status:completed"]
