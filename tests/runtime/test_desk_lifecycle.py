"""Desk lifecycle: store failures, odd runner statuses, bounded caches, close, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import deskwork.runtime.desk as desk_module
from deskwork import Desk, EventType, Job, Report, RunConfig, RunState, Worker
from deskwork.core.types import RunStatus
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool


@tool(requires_confirmation=True)
def launch(target: str) -> str:
    """Launch something."""
    return f"launched {target}"


class FailingStore(InMemoryRunStore):
    """Fails to store a run's final result."""

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        if status == "completed":
            raise OSError("disk full")
        super().update_run(run_id, status, output, output_json, state)


def test_a_store_failure_at_the_end_gives_a_failed_report() -> None:
    store = FailingStore()
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("done")]), run_store=store)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert report.status == "failed"
    assert "storing the run's result failed: OSError: disk full" in report.errors[-1]
    record = store.get_run(report.run_id)
    assert record is not None and record.status == "failed"  # not left running
    assert report.events[-1].type == EventType.RUN_FAILED


def test_a_store_failure_at_the_end_leaves_one_end_event() -> None:
    """The record is stored before the end event: a record that cannot be stored fails the
    run, and ``run.failed`` is its only end event (no ``run.completed`` before it)."""
    store = FailingStore()
    desk = Desk(model="m", adapter=ScriptedAdapter([reply("done")]), run_store=store)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    ends = [e.type for e in store.get_events(report.run_id) if e.type.startswith("run.")]
    assert ends == [EventType.RUN_STARTED, EventType.RUN_FAILED]


class StuckRunner:
    """A runner that (wrongly) reports it is still running."""

    name = "stuck"
    runner_type = "custom"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        report = Report(run_id=config.run_id, status="running")
        state = RunState(
            run_id=config.run_id, status="running", runner_type="custom", runner_name="stuck",
            job=job.to_state(),
        )  # fmt: skip
        return report, state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        raise AssertionError("never paused")


def test_a_runner_ending_running_is_recorded_as_failed() -> None:
    store = InMemoryRunStore()
    desk = Desk(model="m", adapter=ScriptedAdapter(), run_store=store)
    report = desk.run(StuckRunner(), Job(input="x"))
    assert report.status == "failed"
    assert "ended with status 'running'" in report.errors[0]
    record = store.get_run(report.run_id)
    assert record is not None and record.status == "failed"


def test_old_pauses_resume_from_the_stored_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(desk_module, "LIVE_CACHE_LIMIT", 2)
    adapter = ScriptedAdapter(default=call_tool("launch", target="x"))
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    worker = Worker(name="w", tools=[launch])
    paused = [desk.run(worker, Job(input=f"job {i}")) for i in range(3)]
    assert all(r.status == "paused" for r in paused)
    assert len(desk._live_jobs) == 2 and paused[0].run_id not in desk._live_jobs
    adapter._default = reply("done")
    resumed = desk.resume(paused[0], True)  # its live objects were evicted
    assert resumed.status == "completed", resumed.errors
    assert resumed.tool_calls[0].result is not None
    assert resumed.tool_calls[0].result.content == "launched x"


def test_close_releases_the_desks_own_sqlite_stores(tmp_path: Path) -> None:
    with Desk(model="m", adapter=ScriptedAdapter([reply("ok")]), storage_dir=tmp_path) as desk:
        assert desk.run(Worker(name="w"), Job(input="hi")).status == "completed"
        desk.session_store.get_session("none")
    with pytest.raises(Exception, match="closed"):
        desk.run_store.get_run("x")
    given = InMemoryRunStore()
    Desk(model="m", adapter=ScriptedAdapter(), run_store=given).close()
    assert given.get_run("x") is None  # a store the caller passed in stays usable


def test_sync_run_accepts_limits() -> None:
    adapter = ScriptedAdapter(default=call_tool("launch2", target="x"))
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="loop"), limits={"max_iterations": 2})
    assert report.status == "failed"
    assert report.errors == ["max_iterations exceeded (2)"]


def test_streamed_scripted_turns_carry_their_cost() -> None:
    adapter = ScriptedAdapter([Turn(content="streamed words", cost=0.25)])
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore(), stream=True)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    done = next(e for e in report.events if e.type == EventType.LLM_COMPLETED)
    assert done.payload["cost"] == 0.25
    assert report.metrics["cost"] == 0.25


@tool(requires_confirmation=True)
def launch_b(target: str) -> str:
    """Launch something else."""
    return f"B launched {target}"


def test_same_named_runners_each_resume_their_own_pause() -> None:
    """In-process resume uses the runner that paused the run, not the last one named so."""
    adapter = ScriptedAdapter(
        [call_tool("launch", target="x"), call_tool("launch_b", target="y")],
        default=reply("done"),
    )
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    first = desk.run(Worker(name="ops", tools=[launch]), Job(input="a"))
    second = desk.run(Worker(name="ops", tools=[launch_b]), Job(input="b"))  # same name
    assert first.status == second.status == "paused"
    resumed_first = desk.resume(first.run_id, True)
    resumed_second = desk.resume(second.run_id, True)
    assert resumed_first.tool_calls[0].result is not None
    assert resumed_first.tool_calls[0].result.content == "launched x"
    assert resumed_second.tool_calls[0].result is not None
    assert resumed_second.tool_calls[0].result.content == "B launched y"
