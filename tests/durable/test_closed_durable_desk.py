"""A closed durable desk starts no durable work. Before, submit after close() launched DBOS
again and queued the run, and run/result/cancel launched it too: the process then served the
queues again with the closed desk, so the runs it took (its own or any other process's) failed
with 'the store ... is closed' (logged by DBOS) instead of running where they could."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, reply


def test_a_closed_desk_starts_no_durable_work(tmp_path: Path) -> None:
    from deskwork.runtime import _durable

    desk = Desk(
        model="m", adapter=ScriptedAdapter([reply("done")]), storage_dir=tmp_path, durable=True
    )
    run_id = desk.submit(Worker(name="quick"), "hello")
    assert desk.result(run_id, timeout=30).status == "completed"
    desk.close()

    for use in (
        lambda: desk.submit(Worker(name="quick"), "again"),
        lambda: desk.run(Worker(name="quick"), "again"),
        lambda: desk.result(run_id, timeout=1),
        lambda: desk.cancel(run_id),
        desk.recover,
    ):
        with pytest.raises(ConfigurationError, match="desk is closed"):
            use()
    assert _durable._current == []  # DBOS was not started again
