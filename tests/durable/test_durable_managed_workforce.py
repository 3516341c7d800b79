"""A managed workforce on a durable desk: the manager's choice is recorded like any model
call's result (pickled by DBOS) and picks the worker. Its response schema was a class made by
``create_model`` that pickle cannot find, so every manager call failed ("Can't pickle ...
WorkerSelection") and the workforce always fell back to its first worker."""

from __future__ import annotations

import pickle
from pathlib import Path

from deskwork import Desk, EventType, Job, Worker, Workforce
from deskwork.testing import ScriptedAdapter, reply, structured
from deskwork.workforce._managed import WorkerSelection, selection_schema


def test_the_managers_choice_picks_the_worker_on_a_durable_desk(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([structured({"worker": "writer"}), reply("written")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    team = Workforce(
        [Worker(name="researcher"), Worker(name="writer")],
        mode="managed",
        manager=Worker(name="boss"),
    )
    try:
        report = desk.run(team, Job(input="Write the note."))
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "written"), report.errors
    types = [e.type for e in report.events]
    assert EventType.LLM_FAILED not in types
    assert EventType.WORKFORCE_WARNING not in types  # no fallback to the first worker
    started = [e.source for e in report.events if e.type == EventType.WORKER_STARTED]
    assert started == ["boss", "writer"]


def test_a_rosters_selection_pickles_as_the_module_level_class() -> None:
    schema = selection_schema(["researcher", "writer"])
    enum = schema.model_json_schema()["properties"]["worker"]["enum"]
    assert enum == ["researcher", "writer"]  # the provider still sees the roster
    answer = pickle.loads(pickle.dumps(schema(worker="writer")))
    assert (type(answer), answer.worker) == (WorkerSelection, "writer")
