"""Runs of one durable desk run with the runner they were given, even when other runners of
the same name are given meanwhile (a server that builds a ``Worker(name="assistant")`` per
request, with that user's instructions and tools). The workflow looked its runner up by
name, so every concurrent run took the runner registered last: alice's request ran with
dave's instructions."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.core.report import Report
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HOLD = threading.Event()
HELD = threading.Event()


@tool
def hold() -> str:
    """Holds the queue until the test lets go."""
    HELD.set()
    HOLD.wait(30)
    return "held"


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([call_tool("hold"), *[reply("ok")] * 20]),
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


def _spend_the_tool_call(desk: Desk) -> None:
    """Run the script's first turn (the tool call the last test's blocker makes)."""
    HOLD.set()
    desk.run(Worker(name="warm", tools=[hold]), "warm up")


def test_concurrent_runs_each_run_with_their_own_runner(desk: Desk) -> None:
    async def main() -> list[Report]:
        return await asyncio.gather(*(desk.arun(_assistant(u), f"hi, {u}") for u in USERS))

    _spend_the_tool_call(desk)
    reports = asyncio.run(main())

    assert [_instructions(r) for r in reports] == [f"The user is {u}." for u in USERS]


def test_submitted_runs_each_run_with_their_own_runner(desk: Desk) -> None:
    _spend_the_tool_call(desk)
    run_ids = [desk.submit(_assistant(u), f"hi, {u}") for u in USERS]

    reports = [desk.result(run_id, timeout=60) for run_id in run_ids]

    assert [_instructions(r) for r in reports] == [f"The user is {u}." for u in USERS]


def test_queued_runs_keep_their_runner_past_any_cache_and_another_unregister(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskwork.runtime import _durable
    from deskwork.runtime import desk as desk_module

    monkeypatch.setattr(_durable, "_declared", {})  # queue declarations are process-wide
    monkeypatch.setattr(desk_module, "LIVE_CACHE_LIMIT", 1)  # many runs or pauses meanwhile
    HOLD.clear()
    HELD.clear()
    desk.queue("one-at-a-time", concurrency=1)
    blocker = desk.submit(Worker(name="blocker", tools=[hold]), "hold", queue="one-at-a-time")
    assert HELD.wait(30)
    run_ids = [desk.submit(_assistant(u), f"hi, {u}", queue="one-at-a-time") for u in USERS]
    desk.unregister(_assistant("zed"))  # another runner of that name, forgotten
    HOLD.set()

    assert desk.result(blocker, timeout=60).status == "completed"
    reports = [desk.result(run_id, timeout=60) for run_id in run_ids]
    assert [_instructions(r) for r in reports] == [f"The user is {u}." for u in USERS]


def test_the_runners_of_runs_ended_elsewhere_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskwork.runtime import _durable

    monkeypatch.setattr(_durable, "SWEEP_FLOOR", 4, raising=False)
    monkeypatch.setattr(_durable, "_serves", lambda queue: True)  # it could run them here
    monkeypatch.setenv("DESKWORK_QUEUES", "default")  # ... but another process does
    desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir=tmp_path, durable=True)
    try:
        first = [desk.submit(_assistant(u), "hi", queue="elsewhere") for u in USERS]
        for run_id in first:  # ended by another process ('deskwork runs fail')
            assert _durable.cancel_in_database(desk.database_url, run_id)
        later = [desk.submit(_assistant(u), "hi", queue="elsewhere") for u in USERS]

        assert set(_durable._engine().given) == set(later)  # not one runner per run ever
    finally:
        desk.close()


def test_a_sweep_keeps_a_run_queued_while_it_reads(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskwork.runtime import _durable

    desk.submit(_assistant("alice"), "hi")  # DBOS runs
    engine, late = _durable._engine(), _assistant("bob")
    read = _durable.DBOS.list_workflows

    def read_while_queued(**options: Any) -> Any:
        engine.given["late"] = (desk, late)  # queued by another thread meanwhile
        engine.queued.add("late")
        return read(**options)

    monkeypatch.setattr(_durable.DBOS, "list_workflows", read_while_queued)
    engine.sweep()

    assert engine.given.get("late") == (desk, late)


def test_a_sweep_reads_a_backlog_larger_than_a_statement_takes(postgres_database: str) -> None:
    from deskwork.runtime import _durable

    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([reply("ok")]),
        database_url=postgres_database,
        durable=True,
    )
    try:
        ended = desk.submit(_assistant("alice"), "hi")
        desk.result(ended, timeout=60)
        engine, bob = _durable._engine(), _assistant("bob")
        engine.given[ended], backlog = (desk, bob), [f"queued-{n}" for n in range(70_000)]
        engine.queued.add(ended)
        for run_id in backlog:  # more than the 65,535 parameters of one statement
            engine.given[run_id] = (desk, bob)
            engine.queued.add(run_id)

        engine.sweep()  # raised psycopg's OperationalError, and so every later submit

        assert ended not in engine.given and len(engine.given) == len(backlog)
    finally:
        desk.close()


def test_a_failed_sweep_does_not_fail_the_submit(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskwork.runtime import _durable

    _spend_the_tool_call(desk)
    engine = _durable._engine()

    def unreachable(**options: Any) -> Any:
        raise RuntimeError("the database went away for a moment")

    monkeypatch.setattr(_durable.DBOS, "list_workflows", unreachable)
    monkeypatch.setattr(engine, "sweep_at", 1)  # this submit sweeps

    run_id = desk.submit(_assistant("alice"), "hi")

    assert _instructions(desk.result(run_id, timeout=60)) == "The user is alice."
