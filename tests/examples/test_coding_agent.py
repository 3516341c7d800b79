"""examples/coding_agent: the offline run fixes the failing test, reports, restores, stores."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from deskwork.core.event import EventType
from deskwork.store.sqlite import SQLiteRunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
BUG = "return round(price - price * percent, 2)"
FIX = "return round(price - price * percent / 100, 2)"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    """``run.py`` under its own module name (it puts its folder on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location("coding_agent_run", EXAMPLE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(EXAMPLE / "project", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _events(storage: Path, run_id: str) -> list[Any]:
    store = SQLiteRunStore(storage / "deskwork.db")
    try:
        return store.get_events(run_id)
    finally:
        store.close()


def test_offline_run_fixes_the_test_reports_and_restores(
    example: ModuleType, project: Path, tmp_path: Path
) -> None:
    original = (project / "pricing.py").read_text()
    assert BUG in original
    storage = tmp_path / "store"
    result = example.run_example(project=project, storage_dir=storage, stream=True,
                                 preserve=False)  # fmt: skip

    # the test failed before, the coder's confirmed edit fixed it
    assert result.tests_before["passed"] is False
    assert any("test_ten_percent_off" in f for f in result.tests_before["failures"])
    assert result.tests_after["passed"] is True and result.ok
    assert result.main.status == "completed"
    assert len(result.confirmations) == 1 and "replace_in_file" in result.confirmations[0]
    assert result.changed_files == ["pricing.py"]
    # the reports are grounded in the real change
    assert result.review.verdict == "approve" and result.review.tests_passed is True
    assert result.review.changed_files == ["pricing.py"]
    assert "pricing.py" in result.summary and "pass now" in result.summary
    # the edit was restored
    assert result.restored == ["pricing.py"]
    assert (project / "pricing.py").read_text() == original

    main_events = _events(storage, result.main.run_id)
    types = [e.type for e in main_events]
    for kind in (EventType.RUN_PAUSED, EventType.TOOL_CONFIRMATION_REQUESTED,
                 EventType.RUN_RESUMED, EventType.STREAM_TOKEN):  # fmt: skip
        assert kind in types
    assert types[-1] == EventType.RUN_COMPLETED
    previews = {e.source: e.payload["result_preview"] for e in main_events
                if e.type == EventType.TOOL_COMPLETED}  # fmt: skip
    assert previews["replace_in_file"] == "edited pricing.py"
    assert set(previews) >= {"list_files", "run_tests", "search_docs", "read_file", "remember",
                             "blackboard_write", "channel_send"}  # fmt: skip
    assert all(len(p) <= 200 for p in previews.values())
    flow_events = _events(storage, result.flow.run_id)
    sources = {e.source for e in flow_events if e.type == EventType.TOOL_COMPLETED}
    assert sources == {"channel_receive", "blackboard_read", "recall"}
    started = next(e for e in flow_events if e.type == EventType.RUN_STARTED)
    assert started.payload["job_id"]  # the flow's job is stored with its changed_files
    store = SQLiteRunStore(storage / "deskwork.db")
    try:
        record = store.get_run(result.flow.run_id)
    finally:
        store.close()
    assert record is not None and record.input["metadata"]["changed_files"] == ["pricing.py"]
    assert record.input["input"]["changed_files"] == ["pricing.py"]


def test_preserve_keeps_the_fix_and_a_refusal_changes_nothing(
    example: ModuleType, project: Path, tmp_path: Path
) -> None:
    kept = example.run_example(project=project, storage_dir=tmp_path / "a", stream=False,
                               preserve=True)  # fmt: skip
    assert kept.ok and kept.restored == []
    assert FIX in (project / "pricing.py").read_text()

    (project / "pricing.py").write_text((project / "pricing.py").read_text().replace(FIX, BUG))
    refused = example.run_example(project=project, storage_dir=tmp_path / "b", stream=False,
                                  preserve=False, confirm=lambda prompt: False)  # fmt: skip
    assert refused.changed_files == [] and not refused.ok
    assert refused.tests_after["passed"] is False
    assert refused.review.verdict == "request_changes"
    assert "FAILED" in refused.main.content  # the coder reports the real test result
    assert BUG in (project / "pricing.py").read_text()


def test_tools_never_leave_the_project(example: ModuleType, project: Path, tmp_path: Path) -> None:
    from coding_tools import OutsideProjectError, Workspace

    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (project / "link_out").symlink_to(outside)
    (project / "dir_out").symlink_to(tmp_path)
    (project / "link_in").symlink_to(project / "pricing.py")
    ws = Workspace(project)
    for path in (str(outside), "../secret.txt", "link_out", "dir_out/secret.txt", "~/x", ""):
        with pytest.raises(OutsideProjectError):
            ws.resolve(path)
    assert ws.resolve("link_in") == (project / "pricing.py").resolve()
    assert ws.resolve("sub/../pricing.py") == (project / "pricing.py").resolve()


def test_edit_tools_refuse_paths_outside_through_the_tool_layer(
    example: ModuleType, project: Path, tmp_path: Path
) -> None:
    from coding_tools import Workspace, workspace_tools

    from deskwork import ToolCall
    from deskwork.memory import InMemoryMemoryStore
    from deskwork.tools import execute_tool

    target = tmp_path / "victim.txt"
    target.write_text("untouched")
    tools = workspace_tools(Workspace(project), InMemoryMemoryStore())
    assert tools["write_file"].requires_confirmation
    assert tools["replace_in_file"].requires_confirmation
    call = ToolCall(id="1", name="write_file", arguments={"path": "../victim.txt", "content": "x"})
    result = execute_tool(tools["write_file"], call)
    assert result.error is not None and "outside the project folder" in result.error
    assert target.read_text() == "untouched"


def test_the_script_runs_from_the_command_line(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in (EXAMPLE / "project").iterdir() if p.is_file()}
    env = {**os.environ, "DESKWORK_STREAM": "0"}
    env.pop("PRESERVE_EXAMPLE_CHANGES", None)
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "--storage-dir", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests before: Ran 4 tests" in done.stdout and "FAILED (failures=2)" in done.stdout
    assert "tests after: Ran 4 tests" in done.stdout and '"verdict": "approve"' in done.stdout
    assert "restored pricing.py" in done.stdout
    after = {p.name: p.read_bytes() for p in (EXAMPLE / "project").iterdir() if p.is_file()}
    assert after == before
    assert not (EXAMPLE / "project" / "__pycache__").exists()
