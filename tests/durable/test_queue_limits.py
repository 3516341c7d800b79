"""Queue settings, timeouts and cancellation of durable runs in one process; and
``deskwork runs fail`` cancelling a durable run's workflow so no worker continues it."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from durablekit import PYTHON, app_env, lines, open_store, run_app, wait_for

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

STARTED = threading.Event()


@tool
async def slow() -> str:
    """Takes 1.5 s."""
    STARTED.set()
    await asyncio.sleep(1.5)
    return "slow done"


@pytest.fixture
def adapter() -> ScriptedAdapter:
    return ScriptedAdapter([call_tool("slow"), call_tool("slow"), reply("done")])


@pytest.fixture
def durable(
    tmp_path: Path, adapter: ScriptedAdapter, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Desk]:
    from deskwork.runtime import _durable

    monkeypatch.setattr(_durable, "_declared", {})  # queue declarations are process-wide
    STARTED.clear()
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path / "d", durable=True)
    yield desk
    desk.close()


def _types(desk: Desk, run_id: str) -> list[str]:
    return [str(e.type) for e in desk.run_store.get_events(run_id)]


def test_a_run_over_its_timeout_ends_failed_with_a_timeout_error(
    durable: Desk, adapter: ScriptedAdapter
) -> None:
    run_id = durable.submit(Worker(name="sleeper", tools=[slow]), "go", timeout=0.5)

    report = durable.result(run_id, timeout=30)

    assert report.status == "failed"
    assert report.errors == ["run timed out: it ran longer than its timeout of 0.5 s"]
    time.sleep(2)  # long enough for a second tool call, had the run gone on
    types = _types(durable, run_id)
    assert types.count("tool.started") == 1 and "tool.completed" not in types
    assert types[-1] == "run.failed" and types.count("run.failed") == 1
    assert len(adapter.calls) == 1
    record = durable.run_store.get_run(run_id)
    assert record is not None and record.status == "failed"


def test_a_run_within_its_timeout_completes(tmp_path: Path) -> None:
    desk = Desk(
        model="m", adapter=ScriptedAdapter([reply("quick")]), storage_dir=tmp_path, durable=True
    )
    try:
        report = desk.result(desk.submit(Worker(name="quick"), "go", timeout=30), timeout=30)
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "quick")


def test_cancel_a_running_run_stops_it_at_its_next_step(
    durable: Desk, adapter: ScriptedAdapter
) -> None:
    run_id = durable.submit(Worker(name="sleeper", tools=[slow]), "go")
    assert STARTED.wait(30)

    durable.cancel(run_id)

    report = durable.result(run_id, timeout=30)
    assert report.status == "failed" and report.errors == ["run cancelled"]
    time.sleep(2.5)  # the tool call ends; the run must not go on to its next model call
    assert len(adapter.calls) == 1
    types = _types(durable, run_id)
    assert types[-1] == "run.failed" and types.count("run.failed") == 1
    assert "tool.completed" not in types


def test_queue_settings_are_stored_in_the_database(durable: Desk) -> None:
    from dbos import DBOS

    settings = durable.queue(
        "limited", concurrency=4, worker_concurrency=2, model_requests_per_minute=30
    )
    durable.submit(Worker(name="sleeper", tools=[slow]), "go", queue="other")  # starts DBOS

    queue = DBOS.retrieve_queue("limited")
    gate = DBOS.retrieve_queue("limited:model-requests")
    assert queue is not None and gate is not None
    assert (queue.global_concurrency, queue.worker_concurrency) == (4, 2)
    assert gate.limiter == {"limit": 30, "period": 60.0}
    assert settings.model_requests_per_minute == 30

    durable.queue("limited", concurrency=4)  # declared again, without a rate: none
    assert gate.limiter is None
    assert queue.worker_concurrency is None


@pytest.mark.parametrize(
    "limits",
    [
        {"concurrency": 0},
        {"worker_concurrency": -1},
        {"model_requests_per_minute": 0},
        {"concurrency": 1, "worker_concurrency": 2},
    ],
)
def test_queue_rejects_bad_limits(durable: Desk, limits: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        durable.queue("q", **limits)


def test_submit_rejects_a_bad_timeout(durable: Desk) -> None:
    for timeout in (0, -1.0):
        with pytest.raises(ValueError, match="timeout"):
            durable.submit(Worker(name="sleeper", tools=[slow]), "go", timeout=timeout)


def test_queue_settings_need_a_durable_desk(tmp_path: Path) -> None:
    desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir=tmp_path)
    try:
        with pytest.raises(ConfigurationError):
            desk.queue("q", concurrency=2)
    finally:
        desk.close()


def _status(directory: Path, backend: dict[str, str], run_id: str) -> str | None:
    store = open_store(directory, backend)
    try:
        record = store.get_run(run_id)
        return None if record is None else str(record.status)
    finally:
        store.close()


def _worker(directory: Path, backend: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:desk", "--queue", "jobs"],
        env=app_env(directory, **backend),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    return proc


def test_runs_fail_cancels_the_durable_workflow_so_no_worker_continues_it(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    worker = _worker(tmp_path, backend)
    try:
        assert worker.stdout is not None
        assert "serving queue 'jobs'" in worker.stdout.readline()
        run_app(tmp_path, "enqueue", "run-f", "crasher", "jobs", DESKWORK_QUEUES="", **backend)
        wait_for(lambda: lines(tmp_path / "step_two") != [], what="tool call 2 to start")
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)

    failed = subprocess.run(
        [PYTHON, "-m", "deskwork", "runs", "fail", "run-f"],
        env=app_env(tmp_path, **backend),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert failed.returncode == 0, failed.stderr
    assert "its durable workflow is cancelled" in failed.stdout

    # a worker that starts now finds nothing to take over: the run stays failed
    successor = _worker(tmp_path, backend)
    try:
        assert successor.stdout is not None
        assert "(recovered 0 runs)" in successor.stdout.readline()
        time.sleep(2)
    finally:
        successor.send_signal(signal.SIGTERM)
        successor.wait(timeout=30)
    assert _status(tmp_path, backend, "run-f") == "failed"
    assert len(lines(tmp_path / "step_two")) == 1  # never called again


@pytest.mark.parametrize(
    ("flag", "value"), [("--rate", "0"), ("--concurrency", "0"), ("--queue-concurrency", "-2")]
)
def test_worker_rejects_a_limit_below_one(tmp_path: Path, flag: str, value: str) -> None:
    done = subprocess.run(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:desk", flag, value],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert f"error: {flag} must be >= 1" in done.stderr


def test_worker_rejects_a_worker_concurrency_above_the_queue_concurrency(tmp_path: Path) -> None:
    limits = ("--concurrency", "4", "--queue-concurrency", "2")
    done = subprocess.run(
        [PYTHON, "-m", "deskwork", "worker", "durable_app:desk", *limits],
        env=app_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "worker_concurrency (4) cannot exceed concurrency (2)" in done.stderr


def test_a_worker_flag_changes_only_its_own_limit(durable: Desk) -> None:
    from deskwork.cli.worker import _settings
    from deskwork.runtime import _durable

    durable.queue("shared", concurrency=8, model_requests_per_minute=6)  # stored by another
    durable.submit(Worker(name="sleeper", tools=[slow]), "go", queue="other")  # starts DBOS

    settings = _settings(_durable, "shared", 2, None, None)  # deskwork worker --concurrency 2

    assert settings == _durable.QueueSettings("shared", 8, 2, 6)
    assert _settings(_durable, "shared", None, None, None) is None
