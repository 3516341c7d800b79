"""A queue's model-request limit counts the model calls of a subworker that a tool of a
run on that queue spawns (they run inside the tool's step, each admitted on its own)."""

from __future__ import annotations

from pathlib import Path

from dbos import DBOS

from deskwork import Desk, Worker
from deskwork.runtime._durable import ADMIT_NAME
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import create_subworker_tool


def test_a_subworkers_model_calls_are_admitted_by_the_queues_rate_limit(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(
        [
            call_tool("spawn_subworker", name="researcher", instructions="R.", task="look"),
            reply("found it"),  # the subworker
            reply("summary: found it"),  # the lead
        ]
    )
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        desk.queue("limited", model_requests_per_minute=100)
        lead = Worker(name="lead", tools=[create_subworker_tool(desk)])
        report = desk.result(desk.submit(lead, "research", queue="limited"), timeout=120)
        admitted = DBOS.list_workflows(name=ADMIT_NAME, load_input=False, load_output=False)
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "summary: found it"), report.errors
    assert len(admitted) == 3  # the lead's two calls and the subworker's one
