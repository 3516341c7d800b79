"""Runs of one durable desk run with the runner they were given, even when other runners of
the same name are given meanwhile (a server that builds a ``Worker(name="assistant")`` per
request, with that user's instructions and tools). The workflow looked its runner up by
name, so every concurrent run took the runner registered last: alice's request ran with
dave's instructions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.core.report import Report
from deskwork.testing import ScriptedAdapter, reply


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([reply("ok")] * 20),
        storage_dir=tmp_path,
        durable=True,
    )
    yield desk
    desk.close()


def _instructions(report: Report) -> str | None:
    assert report.status == "completed", report.errors
    return report.messages[0].content


def _assistant(user: str) -> Worker:
    return Worker(name="assistant", instructions=f"The user is {user}.")


USERS = ("alice", "bob", "carol", "dave")


def test_concurrent_runs_each_run_with_their_own_runner(desk: Desk) -> None:
    async def main() -> list[Report]:
        return await asyncio.gather(*(desk.arun(_assistant(u), f"hi, {u}") for u in USERS))

    reports = asyncio.run(main())

    assert [_instructions(r) for r in reports] == [f"The user is {u}." for u in USERS]


def test_submitted_runs_each_run_with_their_own_runner(desk: Desk) -> None:
    run_ids = [desk.submit(_assistant(u), f"hi, {u}") for u in USERS]

    reports = [desk.result(run_id, timeout=60) for run_id in run_ids]

    assert [_instructions(r) for r in reports] == [f"The user is {u}." for u in USERS]
