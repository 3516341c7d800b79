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
