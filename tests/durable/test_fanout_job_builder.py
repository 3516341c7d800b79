"""``Parallel(distribute=...)`` with a ``job_builder`` that raises: on a durable desk the
failure names the step, as in-process, and the other branches still run as child runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.testing import ScriptedAdapter, Turn, reply
from deskwork.workflow import Parallel, Step, WorkflowContext


def _answer(messages: list[dict[str, Any]], tools: Any) -> Turn:
    return reply(f"{str(messages[0]['content']).split()[0]} answers")


def _no_job(ctx: WorkflowContext) -> Job:
    raise LookupError("no brief for beta")


def _run(desk: Desk, names: tuple[str, ...]) -> Report:
    branches = [
        Step(Worker(name=n, instructions=n), job_builder=_no_job if n == "beta" else None)
        for n in names
    ]
    return desk.run(desk.flow([Parallel(*branches, distribute=True)], name="fork"), "go")


def _both(tmp_path: Path, names: tuple[str, ...]) -> tuple[Report, Report]:
    """The flow's report in-process (a desk that is not durable), then fanned out."""
    plain = Desk(model="m", adapter=ScriptedAdapter(default=_answer), storage_dir=tmp_path / "p")
    try:  # not durable: distribute=True runs the branches in-process, in the run
        in_process = _run(plain, names)
    finally:
        plain.close()
    desk = Desk(
        model="m", adapter=ScriptedAdapter(default=_answer), storage_dir=tmp_path, durable=True
    )
    try:
        return in_process, _run(desk, names)
    finally:
        desk.close()


def _steps(report: Report) -> list[tuple[str, str, Any]]:
    return sorted(
        (e.type, e.source, e.payload.get("status"))
        for e in report.events
        if e.type.startswith("step.")
    )


def test_a_failed_job_builder_fails_its_branch_as_it_fails_in_process(tmp_path: Path) -> None:
    in_process, fanned_out = _both(tmp_path, ("alpha", "beta", "gamma"))

    assert in_process.status == fanned_out.status == "failed"
    assert in_process.errors == ["step 'beta': LookupError: no brief for beta"]
    assert fanned_out.errors == in_process.errors  # was "Parallel 'parallel': LookupError: ..."
    assert _steps(fanned_out) == _steps(in_process)
    ended = [e.payload for e in fanned_out.events if e.type == "fanout.member_ended"]
    assert [(e["member"], e["status"]) for e in ended] == [
        ("alpha", "completed"),
        ("gamma", "completed"),
    ]


def test_when_no_job_can_be_built_nothing_is_fanned_out(tmp_path: Path) -> None:
    in_process, fanned_out = _both(tmp_path, ("beta",))

    assert fanned_out.status == "failed"
    assert fanned_out.errors == in_process.errors == ["step 'beta': LookupError: no brief for beta"]
    assert _steps(fanned_out) == _steps(in_process)
    assert "fanout.started" not in [e.type for e in fanned_out.events]


def test_child_run_ids_follow_the_step_positions_past_a_failed_job_builder(
    tmp_path: Path,
) -> None:
    """gamma's child is ``.3`` with beta's job unbuilt: numbered over the built jobs it was
    ``.2``, beta's number, so a recovered parent whose beta builds this time was handed
    gamma's finished child as beta's."""
    _, fanned_out = _both(tmp_path, ("alpha", "beta", "gamma"))

    started = next(e.payload for e in fanned_out.events if e.type == "fanout.started")
    numbers = {m["member"]: m["run_id"].rsplit(".", 1)[1] for m in started["members"]}
    assert numbers == {"alpha": "1", "gamma": "3"}
    assert all(m["run_id"].startswith(f"{fanned_out.run_id}.") for m in started["members"])
