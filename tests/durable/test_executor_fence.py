"""A worker whose executor lock is lost while it lives (its PostgreSQL session ended by
``pg_terminate_backend``, and no new connection possible for a while): it stops its runs at
their next step, another worker takes them over, and each run and each side effect happens
once. Without the fence both workers would go on with the same runs (split brain)."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from durablekit import HERE, PYTHON, app_env, lines, open_store, stop_workers, wait_for
from faultkit import Proxy

RUNS, CONCURRENCY = 6, 3
VICTIM = "fence-victim"


def _worker(directory: Path, name: str, url: str, **env: str) -> tuple[subprocess.Popen[str], str]:
    """A ``deskwork worker fence_app:desk`` on ``url`` (each tool call takes 3 s); the
    process and its banner line."""
    flags = ["--queue", "fence", "--concurrency", str(CONCURRENCY), "--takeover-every", "1"]
    with (directory / f"{name}.err").open("w") as err:
        proc = subprocess.Popen(
            [PYTHON, "-m", "deskwork", "worker", "fence_app:desk", *flags],
            env=app_env(directory, DESKWORK_DATABASE_URL=url, FENCE_TOOL_SECONDS="3", **env),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert proc.stdout is not None
    banner = proc.stdout.readline()
    assert "serving queue" in banner, (directory / f"{name}.err").read_text()[-3000:]
    return proc, banner


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    stop_workers(procs)


def test_a_worker_that_loses_its_lock_session_stops_before_its_runs_are_taken_over(
    tmp_path: Path, postgres_database: str, workers: list[subprocess.Popen[str]]
) -> None:
    proxy = Proxy(("127.0.0.1", 5432))  # the victim reaches the database through it
    try:
        victim, _ = _worker(tmp_path, "victim", proxy.url(postgres_database),
                            DESKWORK_EXECUTOR_ID=VICTIM)  # fmt: skip
        workers.append(victim)
        submitted = subprocess.run(
            [PYTHON, str(HERE / "fence_app.py"), "submit", str(RUNS), "fence"],
            env=app_env(tmp_path, DESKWORK_DATABASE_URL=postgres_database, DESKWORK_QUEUES=""),
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr[-3000:]
        run_ids: list[str] = json.loads(submitted.stdout.strip().splitlines()[-1])
        survivor, _ = _worker(tmp_path, "survivor", postgres_database)  # runs the rest
        workers.append(survivor)
        by_victim = f" {victim.pid}"
        wait_for(lambda: any(line.endswith(by_victim) for line in lines(tmp_path / "attempts")),
                 60, "the victim's tool calls")  # fmt: skip

        # its lock's session ends, and it cannot open a new one for now
        proxy.refuse()
        with psycopg.connect(postgres_database, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                (f"deskwork executor {VICTIM}",),
            ).fetchall()
        assert ended == [(True,)]
        # the other worker finds the lock free and takes the victim's runs over
        wait_for(lambda: "took over" in (tmp_path / "survivor.err").read_text(), 60,
                 "the survivor to take the victim's runs over")  # fmt: skip
        proxy.restore()  # the victim takes its lock again, and learns what it lost

        def all_completed() -> bool:
            store = open_store(tmp_path, {"DESKWORK_DATABASE_URL": postgres_database})
            try:
                records = [store.get_run(run_id) for run_id in run_ids]
            finally:
                store.close()
            return all(r is not None and r.status == "completed" for r in records)

        wait_for(all_completed, 120, "every run to complete")
        log = (tmp_path / "victim.err").read_text()
        assert "lost its lock" in log and "holds its lock again" in log, log[-3000:]
        assert victim.poll() is None  # fenced, not dead
    finally:
        proxy.cut()

    # every side effect happened once, every call but an interrupted one ran once
    wanted = {f"{n}-{k}" for n in range(RUNS) for k in range(3)}
    assert set((tmp_path / "effects").iterdir()) == {tmp_path / "effects" / e for e in wanted}
    attempts = Counter(tuple(line.split()[:2]) for line in lines(tmp_path / "attempts"))
    assert set(attempts.values()) <= {1, 2}
    assert sum(1 for count in attempts.values() if count == 2) <= CONCURRENCY
    # every run reads as one run: no event of the fenced worker after the takeover, and its
    # record ended with its one end event (both stored together, behind the fence)
    store = open_store(tmp_path, {"DESKWORK_DATABASE_URL": postgres_database})
    try:
        for run_id in run_ids:
            types = Counter(e.type for e in store.get_events(run_id))
            assert types["run.started"] == 1 and types["run.completed"] == 1, (run_id, types)
            assert types["tool.completed"] == 3 and types["tool.started"] <= 4, (run_id, types)
            assert types["run.failed"] == types["tool.failed"] == 0, (run_id, types)
    finally:
        store.close()
