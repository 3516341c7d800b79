"""What a durable run asks of its database, beside its DBOS checkpoints: a run started in
this process reads no record of itself (it has none yet)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _answer(messages: list[dict[str, Any]], _tools: Any) -> Any:
    return reply("3") if messages[-1]["role"] == "tool" else call_tool("add", a=1, b=2)


@pytest.fixture
def desk(backend: dict[str, str], tmp_path: Path) -> Iterator[Desk]:
    url = backend.get("DESKWORK_DATABASE_URL", f"sqlite:///{tmp_path}/deskwork.db")
    desk = Desk(model="m", adapter=ScriptedAdapter(default=_answer), database_url=url, durable=True)
    yield desk
    desk.close()


def test_a_run_started_here_reads_no_record_of_itself(desk: Desk) -> None:
    reads: list[str] = []
    get_run = desk.run_store.get_run

    def counted(run_id: str) -> Any:
        reads.append(run_id)
        return get_run(run_id)

    desk.run_store.get_run = counted  # type: ignore[method-assign]
    worker = Worker(name="adder", tools=[add])
    desk.run(worker, "warm up")  # DBOS launched, statements built
    reads.clear()

    report = desk.run(worker, "add 1 and 2")

    assert (report.status, report.content) == ("completed", "3")
    assert report.run_id not in reads
    record = get_run(report.run_id)
    assert record is not None and record.status == "completed"


def test_a_steps_checkpoint_finds_the_events_before_it_on_disk(postgres_database: str) -> None:
    """PostgreSQL, run store and DBOS in one database: the events a run emitted before a
    step are committed no later than the step's checkpoint (they ride its round trip), so a
    kill -9 just after a checkpoint leaves them readable."""
    import psycopg
    from dbos._debug_trigger import DebugAction, DebugTriggers

    desk = Desk(
        model="m",
        adapter=ScriptedAdapter(default=_answer),
        database_url=postgres_database,
        durable=True,
    )
    seen: list[list[str]] = []

    def look() -> None:  # another connection, right after a step's checkpoint committed
        with psycopg.connect(postgres_database) as conn:
            rows = conn.execute(
                "SELECT type FROM deskwork_events WHERE run_id = 'carried' ORDER BY seq"
            ).fetchall()
        seen.append([str(row[0]) for row in rows])

    worker = Worker(name="adder", tools=[add])
    try:
        desk.run(worker, "warm up")
        DebugTriggers.set_debug_trigger(
            DebugTriggers.DEBUG_TRIGGER_STEP_COMMIT, DebugAction(callback=look)
        )
        try:
            report = desk.run(worker, "add 1 and 2", run_id="carried")
        finally:
            DebugTriggers.clear_debug_triggers()
        stored = desk.run_store.get_events("carried")
    finally:
        desk.close()

    assert report.status == "completed"
    model, tool, _ = seen  # three steps: model, tool, model
    assert "run.started" in model
    assert "tool.started" in tool and "tool.completed" not in tool
    assert [e.event_id for e in stored] == [e.event_id for e in report.events]
