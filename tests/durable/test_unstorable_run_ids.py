"""A caller-chosen run id with a NUL character or a lone surrogate is refused before the run,
on a plain and a durable desk alike (no store keeps one in an id). A durable desk's submit
returned the id and its workflow failed in the background (DBOS logged the StoreError, on
PostgreSQL the insert raised psycopg's DataError); a surrogate raised UnicodeEncodeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, reply


@pytest.mark.parametrize("run_id", ["r\x00", "r\ud800"])
def test_a_run_id_no_store_keeps_is_refused_before_the_run(tmp_path: Path, run_id: str) -> None:
    from dbos import DBOS

    plain = Desk(model="m", adapter=ScriptedAdapter([reply("done")]), storage_dir=tmp_path)
    durable = Desk(
        model="m", adapter=ScriptedAdapter([reply("done")]), storage_dir=tmp_path, durable=True
    )
    try:
        durable.run(Worker(name="quick"), "hello")  # DBOS runs
        for start in (plain.run, durable.run, durable.submit):
            with pytest.raises(ConfigurationError, match="run_id must be"):
                start(Worker(name="quick"), "hello", run_id=run_id)
            assert plain.run_store.get_run(run_id) is None
        assert len(DBOS.list_workflows(load_input=False, load_output=False)) == 1
    finally:
        durable.close()
        plain.close()
