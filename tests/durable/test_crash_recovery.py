"""A durable run survives ``kill -9``: recover() continues it, finished tool calls run once."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from durablekit import HERE, PYTHON, app_env, lines, open_store, run_app, wait_for

from deskwork.store.sqlite import SQLiteRunStore


def _crash_during_step_two(
    tmp_path: Path,
    run_id: str,
    runner: str = "crasher",
    while_alive: Callable[[], None] | None = None,
    **env: str,
) -> None:
    """Start the run in a subprocess and kill -9 it while tool call 2 runs (after calling
    ``while_alive``, if given)."""
    proc = subprocess.Popen(
        [PYTHON, str(HERE / "durable_app.py"), "run", run_id, runner],
        env=app_env(tmp_path, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: lines(tmp_path / "step_two") != [], what="tool call 2 to start")
        if while_alive is not None:
            while_alive()
            assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def test_recover_after_sigkill_runs_finished_steps_once(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    def nothing_to_take_over() -> None:  # its process is alive: its executor lock is held
        assert json.loads(run_app(tmp_path, "recover", **backend).strip().splitlines()[-1]) == []

    _crash_during_step_two(tmp_path, "run-1", while_alive=nothing_to_take_over, **backend)
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "model_calls")) == 2

    reports = json.loads(run_app(tmp_path, "recover", **backend).strip().splitlines()[-1])

    assert reports == [{"run_id": "run-1", "status": "completed", "content": "all done"}]
    assert len(lines(tmp_path / "step_one")) == 1  # exactly once
    assert len(lines(tmp_path / "step_two")) == 2  # the interrupted call ran again
    assert len(lines(tmp_path / "model_calls")) == 3  # recorded answers were not asked again
    store = open_store(tmp_path, backend)
    try:
        record = store.get_run("run-1")
        assert record is not None and record.status == "completed"
        types = [e.type for e in store.get_events("run-1")]
    finally:
        store.close()
    assert types.count("run.started") == 1
    assert types.count("run.recovered") == 1
    assert types.count("tool.completed") == 2
    assert types.count("tool.started") == 2
    assert types.count("llm.completed") == 3
    assert types[-1] == "run.completed"
    # it picked up after what the first process had stored
    assert types.index("run.recovered") > types.index("tool.started", types.index("tool.completed"))

    # calling it again re-runs nothing
    assert json.loads(run_app(tmp_path, "recover", **backend).strip().splitlines()[-1]) == []
    assert len(lines(tmp_path / "step_two")) == 2


def test_unregistered_runner_stays_visible_until_failed(tmp_path: Path) -> None:
    _crash_during_step_two(tmp_path, "run-2")

    out = run_app(tmp_path, "recover", "--unregistered")

    assert json.loads(out.strip().splitlines()[-1]) == []
    store = SQLiteRunStore(tmp_path / ".deskwork" / "deskwork.db")
    try:
        record = store.get_run("run-2")
        assert record is not None and record.status == "running"
        last = store.get_events("run-2")[-1]
        assert last.type == "run.unrecoverable"
        assert "not registered" in last.payload["reason"]
    finally:
        store.close()
    # asked to, it ends failed (and recover() leaves it alone from then on)
    assert json.loads(run_app(tmp_path, "cancel", "run-2").strip()) == {"status": "failed"}
    assert json.loads(run_app(tmp_path, "recover").strip().splitlines()[-1]) == []
    store = SQLiteRunStore(tmp_path / ".deskwork" / "deskwork.db")
    try:
        record = store.get_run("run-2")
        assert record is not None and record.status == "failed"
    finally:
        store.close()
    assert len(lines(tmp_path / "step_two")) == 1


@pytest.mark.parametrize("runner", ["pipeline", "team"])
def test_a_flow_and_a_workforce_recover_after_sigkill(tmp_path: Path, runner: str) -> None:
    """The flow (step ``first`` then ``second``) and the collaborate workforce (the same two
    members) die inside ``second``'s tool call; recovery finishes without redoing ``first``."""
    _crash_during_step_two(tmp_path, "run-3", runner)

    reports = json.loads(run_app(tmp_path, "recover").strip().splitlines()[-1])

    assert [r["status"] for r in reports] == ["completed"]
    assert "first done" in reports[0]["content"] and "second done" in reports[0]["content"]
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "step_two")) == 2
    assert len(lines(tmp_path / "model_calls")) == 4  # 3 before the crash, 1 after
    store = open_store(tmp_path, {})
    try:
        types = [e.type for e in store.get_events("run-3")]
    finally:
        store.close()
    assert types.count("tool.completed") == 2
    assert types.count("run.recovered") == 1
    assert types.count("run.started") == 1
    assert types[-1] == "run.completed"
