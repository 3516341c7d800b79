"""``deskwork worker`` processes serve a queue; desk.submit/result from another process."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from durablekit import (
    PYTHON,
    app_env,
    lines,
    open_store,
    run_app,
    start_workers,
    stop_workers,
    wait_for,
)


@pytest.fixture
def workers(tmp_path: Path, backend: dict[str, str]) -> Iterator[list[subprocess.Popen[str]]]:
    """Two ``python -m deskwork worker durable_app:desk`` processes on queue ``jobs``.

    A job takes 0.5 s: longer than an idle worker's longest wait between polls (0.45 s), so
    the second worker claims jobs while the first one's four slots are busy (at 0.05 s a job,
    the first worker, woken by each run's end, finished all twenty before the other polled)."""
    flags = ["--queue", "jobs", "--concurrency", "4"]
    procs = start_workers(tmp_path, "durable_app:desk", 2, *flags, WORK_SECONDS="0.5", **backend)
    try:
        yield procs
    finally:
        stop_workers(procs, timeout=15)


def test_two_workers_run_twenty_submitted_runs_once_each(
    tmp_path: Path, backend: dict[str, str], workers: list[subprocess.Popen[str]]
) -> None:
    # the submitting process serves no queue: only the workers run the jobs
    out = run_app(tmp_path, "submit", "20", "jobs", DESKWORK_QUEUES="", **backend)

    reports = json.loads(out.strip().splitlines()[-1])
    assert len(reports) == 20
    assert len({r[0] for r in reports}) == 20
    assert all(status == "completed" for _, status, _ in reports)
    assert sorted(r[2] for r in reports) == sorted(f"finished {n}" for n in range(20))
    for n in range(20):
        assert len(lines(tmp_path / f"work-{n}")) == 1  # each job ran exactly once
    pids = {line.split()[1] for line in lines(tmp_path / "pids")}
    assert pids <= {str(p.pid) for p in workers}
    assert len(pids) == 2  # both workers took work


def _status(directory: Path, run_id: str) -> str | None:
    store = open_store(directory, {})
    try:
        record = store.get_run(run_id)
        return None if record is None else str(record.status)
    finally:
        store.close()


def test_worker_rejects_a_target_that_is_not_a_durable_desk(tmp_path: Path) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:crasher"],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a Desk(durable=True)" in done.stderr


def test_a_stopped_worker_leaves_its_run_to_the_next_worker_not_failed(tmp_path: Path) -> None:
    worker = subprocess.Popen(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:desk", "--queue", "jobs", "--drain", "0"],
        env=app_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        assert "serving queue 'jobs'" in worker.stdout.readline()
        run_app(tmp_path, "enqueue", "run-s", "crasher", "jobs", DESKWORK_QUEUES="")
        wait_for(lambda: lines(tmp_path / "step_two") != [], what="tool call 2 to start")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    assert worker.returncode == 0
    store = open_store(tmp_path, {})
    try:
        record = store.get_run("run-s")
        assert record is not None and record.status == "running"  # not failed by the stop
    finally:
        store.close()

    # a worker that starts takes the run over and finishes it
    successor = subprocess.Popen(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:desk", "--queue", "jobs"],
        env=app_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert successor.stdout is not None
        assert "(recovered 1 runs)" in successor.stdout.readline()
        wait_for(lambda: _status(tmp_path, "run-s") == "completed", what="the run to end")
    finally:
        successor.send_signal(signal.SIGTERM)
        successor.wait(timeout=30)
    assert len(lines(tmp_path / "step_one")) == 1
    assert len(lines(tmp_path / "step_two")) == 2


def test_a_worker_takes_queued_runs_by_priority(tmp_path: Path) -> None:
    # queued while no worker serves the queue, then one worker takes them one at a time
    run_app(tmp_path, "prioritised", "ranked", "3", "1", "2", DESKWORK_QUEUES="")
    worker = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "deskwork",
            "worker",
            "durable_app:desk",
            "--queue",
            "ranked",
            "--concurrency",
            "1",
        ],
        env=app_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: len(lines(tmp_path / "pids")) == 3, what="the three runs")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    order = [line.split()[0] for line in lines(tmp_path / "pids")]
    assert order == ["1", "2", "0"]  # priorities 1, 2, 3
