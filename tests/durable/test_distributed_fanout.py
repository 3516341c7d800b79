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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS
from durablekit import (
    HERE,
    PYTHON,
    app_env,
    lines,
    open_store,
    start_workers,
    stop_workers,
    wait_for,
)

from deskwork import Desk, Worker, Workforce
from deskwork.testing import ScriptedAdapter, Turn, fail, reply
from deskwork.workflow import Parallel, Step

MEMBERS = {
    "team": ["m1", "m2", "m3", "m4"],
    "spread": ["b1", "b2", "b3", "b4"],
    "crew": ["c1", "c2", "c3", "c4"],
}


def _workers(directory: Path, count: int) -> list[subprocess.Popen[str]]:
    """``count`` ``deskwork worker fanout_app:desk`` processes serving queue ``fanout``, two
    runs at a time each, taking over dead workers' runs every 0.5 s."""
    flags = ["--queue", "fanout", "--concurrency", "2", "--takeover-every", "0.5"]
    return start_workers(directory, "fanout_app:desk", count, *flags)


def _app(directory: Path, *args: str) -> subprocess.Popen[str]:
    """``fanout_app.py ARGS`` in a process that serves no queue (``run RUNNER...``,
    ``finish RUNNER``)."""
    return subprocess.Popen(
        [PYTHON, str(HERE / "fanout_app.py"), *args],
        env=app_env(directory, DESKWORK_QUEUES=""),
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


def _answering_twice(directory: Path) -> int | None:
    """The pid of a process that has started two answers, if any."""
    pids = Counter(int(line.split()[1]) for line in lines(directory / "answers"))
    return next((pid for pid, count in pids.items() if count >= 2), None)


def _ended(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [payload for kind, payload in report["events"] if kind == "fanout.member_ended"]


class Cluster:
    """Two workers on one database, shared by the tests of this module."""

    def __init__(self, directory: Path, workers: list[subprocess.Popen[str]]) -> None:
        self.directory = directory
        self.worker_pids = {proc.pid for proc in workers}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("fanout")
    workers = _workers(directory, 2)
    try:
        yield Cluster(directory, workers)
    finally:
        stop_workers(workers)


class Spread:
    """One run of ``team`` and one of ``spread`` on the cluster."""

    def __init__(self, cluster: Cluster, reports: list[dict[str, Any]]) -> None:
        self.directory = cluster.directory
        self.worker_pids = cluster.worker_pids
        self.reports = dict(zip(("team", "spread"), reports, strict=True))
        self.marks = _marks(cluster.directory)


@pytest.fixture(scope="module")
def spread(cluster: Cluster) -> Spread:
    return Spread(cluster, _reports(_app(cluster.directory, "run", "team", "spread")))


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


def test_a_recovered_parent_waits_for_its_children_and_starts_none_again(
    cluster: Cluster,
) -> None:
    directory = cluster.directory
    driver = _app(directory, "run", "crew")  # the crew's answers take 1.5 s
    wait_for(
        lambda: any(line.startswith("c") for line in lines(directory / "answers")),
        what="the crew's members to be running",
    )
    driver.kill()  # the parent's process dies while it waits for its children
    driver.wait(timeout=10)
    # recover() or a live worker (it takes over a dead process's runs) continues it
    [report] = _reports(_app(directory, "finish", "crew"))

    assert report["status"] == "completed", report["errors"]
    marks = _marks(directory)
    assert all(len(marks[member]) == 1 for member in MEMBERS["crew"])
    types = [kind for kind, _ in report["events"]]
    assert types.count("run.recovered") == 1
    assert types.count("fanout.started") == 1  # the replay enqueued nothing again
    assert [e["member"] for e in _ended(report)] == MEMBERS["crew"]
    store = open_store(directory, {})
    try:
        for member in MEMBERS["crew"]:  # one child run each
            assert len(store.list_runs(100, runner=member)) == 1
    finally:
        store.close()


def test_a_worker_killed_mid_fan_out_leaves_every_member_completed_once(tmp_path: Path) -> None:
    # the crew's answers take 1.5 s: a worker is killed while answering, its tool calls done
    driver = _app(tmp_path, "run", "crew")
    procs = _workers(tmp_path, 2)
    try:
        # a worker answering for both its members: both tool calls done, none running
        wait_for(lambda: _answering_twice(tmp_path) is not None, what="a worker's two answers")
        victim = next(p for p in procs if p.pid == _answering_twice(tmp_path))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        [report] = _reports(driver)  # the survivor takes the dead worker's members over
    finally:
        stop_workers(procs)

    assert report["status"] == "completed", report["errors"]
    marks = _marks(tmp_path)
    assert sorted(marks) == MEMBERS["crew"]
    assert all(len(pids) == 1 for pids in marks.values())  # no tool call ran twice
    held = [m for m, pids in marks.items() if pids[0] == victim.pid]
    assert held  # the victim had members in flight
    for member in MEMBERS["crew"]:
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


# -- in one process: this process serves the default queue -----------------------------------


def _answer(messages: list[dict[str, Any]], tools: Any) -> Turn:
    member = str(messages[0]["content"]).split("\n")[0]
    if member == "broken":
        return fail(RuntimeError("the model is down"))
    return reply(f"{member} answers")


def _runners(desk: Desk, distribute: bool) -> list[Any]:
    names = ("alpha", "broken", "gamma")
    trio = Workforce(
        [Worker(name=n, instructions=n) for n in names],
        mode="collaborate",
        name="trio",
        distribute=distribute,
    )
    branches = [Step(Worker(name=n, instructions=n)) for n in names]
    flow = desk.flow([Parallel(*branches, distribute=distribute)], name="fork")
    return [trio, flow]


def test_a_failed_member_fails_the_fan_out_as_it_fails_in_process(tmp_path: Path) -> None:
    plain = Desk(model="m", adapter=ScriptedAdapter(default=_answer), storage_dir=tmp_path / "p")
    try:  # not durable: distribute=True runs the members in-process, in the run
        here = [plain.run(runner, "go") for runner in _runners(plain, True)]
    finally:
        plain.close()
    desk = Desk(
        model="m", adapter=ScriptedAdapter(default=_answer), storage_dir=tmp_path, durable=True
    )
    try:
        spread = [desk.run(runner, "go") for runner in _runners(desk, True)]
    finally:
        desk.close()

    for in_process, fanned_out in zip(here, spread, strict=True):
        assert in_process.status == fanned_out.status == "failed"
        assert fanned_out.errors == in_process.errors
        assert any("the model is down" in error for error in fanned_out.errors)
        assert fanned_out.content == in_process.content
        assert "fanout.started" not in [e.type for e in in_process.events]
        ended = [e.payload for e in fanned_out.events if e.type == "fanout.member_ended"]
        assert [e["status"] for e in ended] == ["completed", "failed", "completed"]


def test_members_go_to_the_run_queue_and_pass_its_model_request_limit(tmp_path: Path) -> None:
    desk = Desk(
        model="m", adapter=ScriptedAdapter(default=_answer), storage_dir=tmp_path, durable=True
    )
    try:
        desk.queue("jobs", model_requests_per_minute=100)
        names = ("alpha", "gamma")
        duo = Workforce(
            [Worker(name=n, instructions=n) for n in names],
            mode="collaborate",
            name="duo",
            distribute=True,
        )
        report = desk.result(desk.submit(duo, "go", queue="jobs"), timeout=60)
        admitted = DBOS.list_workflows(name="deskwork.admit", load_input=False)
    finally:
        desk.close()

    assert report.status == "completed", report.errors
    [started] = [e.payload for e in report.events if e.type == "fanout.started"]
    assert started["queue"] == "jobs"  # True: the queue the run was submitted on
    assert [m["member"] for m in started["members"]] == list(names)
    assert len(admitted) == report.metrics["llm_calls"] == 2  # each member call was admitted
