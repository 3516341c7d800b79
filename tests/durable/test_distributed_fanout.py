"""Fan-out over workers: the members of a collaborate workforce and the branches of a
``Parallel`` with ``distribute=`` run as child runs on ``deskwork worker`` processes.

The application is ``fanout_app``: four members, each ~0.3 s of model time and one tool
call that logs the member and its process; the parent runs in a process serving no queue.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from durablekit import HERE, PYTHON, app_env, lines, open_store, wait_for

MEMBERS = {"team": ["m1", "m2", "m3", "m4"], "spread": ["b1", "b2", "b3", "b4"]}


def _workers(directory: Path, count: int) -> list[subprocess.Popen[str]]:
    """``count`` ``deskwork worker fanout_app:desk`` processes serving queue ``fanout``, two
    runs at a time each, started together; returns once each serves."""
    command = [PYTHON, "-m", "deskwork", "worker", "fanout_app:desk", "--queue", "fanout"]
    procs = [
        subprocess.Popen(
            [*command, "--concurrency", "2"],
            env=app_env(directory),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for proc in procs:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "serving queue 'fanout'" in banner, proc.stderr.read() if proc.stderr else ""
    return procs


def _stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def _start_runs(directory: Path, *runners: str, **env: str) -> subprocess.Popen[str]:
    """``fanout_app.py run RUNNER...`` in a process that serves no queue."""
    return subprocess.Popen(
        [PYTHON, str(HERE / "fanout_app.py"), "run", *runners],
        env=app_env(directory, DESKWORK_QUEUES="", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _reports(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err[-3000:]
    reports: list[dict[str, Any]] = json.loads(out.strip().splitlines()[-1])
    return reports


def _marks(directory: Path) -> dict[str, list[int]]:
    """Member -> the pids of the processes that ran its tool call."""
    by_member: dict[str, list[int]] = {}
    for line in lines(directory / "marks"):
        member, pid = line.split()
        by_member.setdefault(member, []).append(int(pid))
    return by_member


def _ended(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [payload for kind, payload in report["events"] if kind == "fanout.member_ended"]


class Spread:
    """One run of ``team`` and one of ``spread`` on two workers (shared by the tests)."""

    def __init__(self, directory: Path, workers: list[int], reports: list[dict[str, Any]]):
        self.directory = directory
        self.worker_pids = set(workers)
        self.reports = dict(zip(("team", "spread"), reports, strict=True))
        self.marks = _marks(directory)


@pytest.fixture(scope="module")
def spread(tmp_path_factory: pytest.TempPathFactory) -> Spread:
    directory = tmp_path_factory.mktemp("fanout")
    workers = _workers(directory, 2)
    try:
        reports = _reports(_start_runs(directory, "team", "spread"))
    finally:
        _stop(workers)
    return Spread(directory, [proc.pid for proc in workers], reports)


@pytest.mark.parametrize("runner", ["team", "spread"])
def test_members_spread_over_both_workers_and_combine_as_in_process(
    spread: Spread, runner: str
) -> None:
    report, members = spread.reports[runner], MEMBERS[runner]

    assert report["status"] == "completed", report["errors"]
    marks = {m: pids for m, pids in spread.marks.items() if m in members}
    assert sorted(marks) == members
    assert all(len(pids) == 1 for pids in marks.values())  # each member ran once
    assert {pids[0] for pids in marks.values()} == spread.worker_pids  # on both workers
    # the executor that ran each child run (hostname-pid-...), in the parent's events
    ended = _ended(report)
    assert [e["member"] for e in ended] == members
    assert {int(e["executor_id"].split("-")[-2]) for e in ended} == spread.worker_pids
    # combined as the in-process fan-out combines: one section per member, in order
    for member in members:
        assert f"{member} done by {marks[member][0]}" in report["content"]
    positions = [report["content"].index(f"## {m}\n") for m in members]
    assert positions == sorted(positions)
    assert report["metrics"]["llm_calls"] == 8  # two model calls per member, rolled up
    assert report["metrics"]["tool_calls"] == 4


def test_child_runs_are_runs_of_their_own_linked_to_the_parent(spread: Spread) -> None:
    store = open_store(spread.directory, {})
    try:
        for report in spread.reports.values():
            for ended in _ended(report):
                child = store.get_run(ended["run_id"])
                assert child is not None and child.status == "completed"
                assert child.runner == ended["member"]
                events = store.get_events(ended["run_id"])
                assert events[0].type == "run.started"
                assert events[0].payload["parent_run_id"] == report["run_id"]
                assert [e.type for e in events].count("tool.completed") == 1
    finally:
        store.close()


def test_a_worker_killed_mid_fan_out_leaves_every_member_completed_once(tmp_path: Path) -> None:
    # each answer takes 2 s: a worker is killed while answering, its tool calls done
    driver = _start_runs(tmp_path, "team", ANSWER_LATENCY="2")
    procs = _workers(tmp_path, 2)
    try:
        wait_for(lambda: lines(tmp_path / "answers") != [], what="a member past its tool call")
        victim = next(p for p in procs if str(p.pid) in lines(tmp_path / "answers")[0])
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        procs += _workers(tmp_path, 1)  # a worker that starts takes the dead one's runs
        [report] = _reports(driver)
    finally:
        _stop(procs)

    assert report["status"] == "completed", report["errors"]
    marks = _marks(tmp_path)
    assert sorted(marks) == MEMBERS["team"]
    assert all(len(pids) == 1 for pids in marks.values())  # no tool call ran twice
    held = [m for m, pids in marks.items() if pids[0] == victim.pid]
    assert held  # the victim had members in flight
    for member in MEMBERS["team"]:
        assert f"## {member}\n" in report["content"]
        assert f"{member} done by {victim.pid}" not in report["content"]
    store = open_store(tmp_path, {})
    try:
        for ended in _ended(report):
            assert ended["status"] == "completed"
            types = Counter(e.type for e in store.get_events(ended["run_id"]))
            assert types["run.completed"] == 1
            assert types["tool.completed"] == 1
            # a member the victim held picks up once where it was (one it had only
            # dequeued may have been recovered too)
            expected = {1} if ended["member"] in held else {0, 1}
            assert types["run.recovered"] in expected
    finally:
        store.close()
