"""A run whose code changed between its crash and its recovery: recover() refuses it with
the reason (``run.unrecoverable``) and leaves it ``running``; a process pinned to the run's
version (``DESKWORK_APP_VERSION``) continues it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from durablekit import lines, open_store
from faultkit import APP, kill_during, run_faults_app


def _copy_app(tmp_path: Path) -> Path:
    """A copy of the application the test may edit (its code, between crash and recovery)."""
    app = tmp_path / "code" / APP.name
    app.parent.mkdir()
    shutil.copy(APP, app)
    return app


def _last_event(directory: Path, run_id: str) -> tuple[str, str, dict[str, object]]:
    store = open_store(directory, {})
    try:
        record = store.get_run(run_id)
        event = store.get_events(run_id)[-1]
    finally:
        store.close()
    assert record is not None
    return record.status, event.type, event.payload


def _pinned_version(reason: str) -> str:
    found = re.search(r"DESKWORK_APP_VERSION=(\S+)", reason)
    assert found, reason
    return found.group(1)


def test_a_run_whose_tool_code_changed_is_refused_until_the_version_is_pinned(
    tmp_path: Path,
) -> None:
    app = _copy_app(tmp_path)
    kill_during(tmp_path, "step_two", "run", "v-1", app=app)
    source = app.read_text()
    app.write_text(source.replace('return "one done"', 'return "one done, v2"'))

    assert run_faults_app(tmp_path, "recover", app=app) == []

    status, kind, payload = _last_event(tmp_path, "v-1")
    assert (status, kind) == ("running", "run.unrecoverable")
    reason = str(payload["reason"])
    assert "'crasher' changed since the run started" in reason
    assert len(lines(tmp_path / "step_two")) == 1  # nothing ran
    assert run_faults_app(tmp_path, "recover", app=app) == []  # still refused, said once
    store = open_store(tmp_path, {})
    try:
        types = [e.type for e in store.get_events("v-1")]
    finally:
        store.close()
    assert types.count("run.unrecoverable") == 1

    version = _pinned_version(reason)
    reports = run_faults_app(tmp_path, "recover", app=app, DESKWORK_APP_VERSION=version)

    assert reports == [{"run_id": "v-1", "status": "completed", "content": "all done"}]
    assert len(lines(tmp_path / "step_one")) == 1  # recorded: not run again
    assert len(lines(tmp_path / "step_two")) == 2


def test_the_same_code_in_another_checkout_recovers_without_a_pinned_version(
    tmp_path: Path,
) -> None:
    kill_during(tmp_path, "step_two", "run", "v-2", app=_copy_app(tmp_path))
    elsewhere = tmp_path / "checkout-2" / APP.name  # another directory, the same source
    elsewhere.parent.mkdir()
    shutil.copy(APP, elsewhere)

    reports = run_faults_app(tmp_path, "recover", app=elsewhere)

    assert reports == [{"run_id": "v-2", "status": "completed", "content": "all done"}]
    assert len(lines(tmp_path / "step_one")) == 1


def test_a_run_of_another_application_version_is_refused_and_named(tmp_path: Path) -> None:
    kill_during(tmp_path, "step_two", "run", "v-3", DESKWORK_APP_VERSION="2026.1")

    assert run_faults_app(tmp_path, "recover", DESKWORK_APP_VERSION="2026.2") == []
    assert run_faults_app(tmp_path, "recover") == []  # the unpinned default is another too

    status, kind, payload = _last_event(tmp_path, "v-3")
    assert (status, kind) == ("running", "run.unrecoverable")
    reason = str(payload["reason"])
    assert "application version '2026.1'" in reason and "'2026.2'" in reason
    assert _pinned_version(reason) == "2026.1"
    assert len(lines(tmp_path / "step_two")) == 1

    reports = run_faults_app(tmp_path, "recover", DESKWORK_APP_VERSION="2026.1")

    assert reports == [{"run_id": "v-3", "status": "completed", "content": "all done"}]
    assert len(lines(tmp_path / "step_one")) == 1


def test_a_refused_run_can_still_be_cancelled(tmp_path: Path) -> None:
    kill_during(tmp_path, "step_two", "run", "v-4", DESKWORK_APP_VERSION="old")
    assert run_faults_app(tmp_path, "recover", DESKWORK_APP_VERSION="new") == []

    assert run_faults_app(tmp_path, "cancel", "v-4", DESKWORK_APP_VERSION="new") == {
        "status": "failed"
    }
    assert run_faults_app(tmp_path, "recover", DESKWORK_APP_VERSION="old") == []
    status, _, _ = _last_event(tmp_path, "v-4")
    assert status == "failed"
