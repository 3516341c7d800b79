"""The ``distribute=`` option of a collaborate workforce and of ``Parallel``: what it accepts,
and what it does on a desk that is not durable (nothing: members run in-process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker, Workforce
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, reply
from deskwork.workflow import Condition, Parallel, Step


def _workers() -> list[Worker]:
    return [Worker(name=n, instructions=n) for n in ("ann", "bob")]


@pytest.mark.parametrize("mode", ["managed", "swarm", "blackboard"])
def test_distribute_is_refused_outside_collaborate_mode(mode: Any) -> None:
    with pytest.raises(ConfigurationError, match="collaborate"):
        Workforce(_workers(), mode=mode, distribute=True)


@pytest.mark.parametrize("bad", ["", "  ", 3, None])
def test_distribute_takes_a_bool_or_a_queue_name(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="queue name"):
        Workforce(_workers(), mode="collaborate", distribute=bad)
    with pytest.raises(ConfigurationError, match="queue name"):
        Parallel(Step(_workers()[0]), distribute=bad)


def test_a_distributed_parallel_needs_steps_as_branches() -> None:
    ann, bob = _workers()
    nested = Condition(lambda ctx: True, Step(bob))
    with pytest.raises(ConfigurationError, match="every branch must be a Step"):
        Parallel(Step(ann), nested, distribute="members")
    assert Parallel(Step(ann), nested).distribute is False  # fine in-process


def test_without_a_durable_desk_the_members_run_in_process(tmp_path: Path) -> None:
    def answer(messages: list[dict[str, Any]], tools: Any) -> Any:
        return reply(f"{messages[0]['content'].split()[0]} here")

    desk = Desk(model="m", adapter=ScriptedAdapter(default=answer), storage_dir=tmp_path)
    try:
        team = Workforce(_workers(), mode="collaborate", name="team", distribute=True)
        flow = desk.flow([Parallel(*(Step(w) for w in _workers()), distribute="q")])
        reports = [desk.run(team, "go"), desk.run(flow, "go")]
    finally:
        desk.close()
    for report in reports:
        assert report.status == "completed", report.errors
        assert "ann here" in (report.content or "") and "bob here" in (report.content or "")
        types = [e.type for e in report.events]
        assert "fanout.started" not in types
        assert types.count("worker.completed") == 2  # the members ran inside this run
