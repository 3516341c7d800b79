"""desk.submit refuses a runner whose name is not a string before storing its run, as
desk.arun does since 0eaca93: at 0eaca93 submit(Worker(name=None)) queued it, the worker's
run.started raised pydantic's ValidationError (Event.source=None) on DBOS's thread, and the run
stayed 'running' for ever."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, reply


def test_submit_refuses_a_runner_without_a_string_name(tmp_path: Path) -> None:
    desk = Desk(
        model="m", adapter=ScriptedAdapter([reply("ok")]), storage_dir=tmp_path, durable=True
    )
    try:
        unnamed = Worker(name="w")
        unnamed.name = None  # type: ignore[assignment]  # Worker(name=None) is refused itself
        with pytest.raises(ConfigurationError, match="name must be a string"):
            desk.submit(unnamed, Job(input="hi"))
        assert desk.run_store.list_runs() == []
    finally:
        desk.close()
