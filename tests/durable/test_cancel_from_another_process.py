"""A run cancelled by one process while a worker process runs it stores nothing after its end.

The cancelling process stores the run's ``run.failed`` at once; the worker, whose model step
had just been recorded, did not know: it went on storing ``assistant.message`` and
``tool.started`` after that end until DBOS stopped the workflow at its next step (the desk's
in-process refusal cannot see an end stored elsewhere). The store refuses them now (events are
written only while the run's record is ``running``) and the worker's run stops there.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from durablekit import HERE, PYTHON, app_env, open_store, start_workers, stop_workers, wait_for

from deskwork.core.event import RUN_END_EVENTS


def test_a_run_cancelled_from_another_process_stores_nothing_after_its_end(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    workers = start_workers(tmp_path, "cancel_app:desk", 1, "--queue", "jobs", **backend)
    try:
        done = subprocess.run(
            [PYTHON, str(HERE / "cancel_app.py"), "submit-and-cancel", "run-x"],
            env=app_env(tmp_path, DESKWORK_QUEUES="", **backend),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result == {"status": "failed", "errors": ["run cancelled"]}
        # the worker's run went on after the cancel: wait until its workflow is over
        wait_for(lambda: (tmp_path / "ended-run-x").exists(), what="the worker's run to stop")
        assert (tmp_path / "held").read_text() == str(workers[0].pid)
    finally:
        stop_workers(workers)
    store = open_store(tmp_path, backend)
    try:
        types = [event.type for event in store.get_events("run-x")]
        record = store.get_run("run-x")
    finally:
        store.close()
    ends = [n for n, kind in enumerate(types) if kind in RUN_END_EVENTS]
    assert ends == [len(types) - 1] and types[-1] == "run.failed", types
    assert record is not None and record.status == "failed"
