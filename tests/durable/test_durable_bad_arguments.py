"""What a durable desk does with arguments production gets wrong: ``cancel`` of a paused or
unknown run, ``result`` with a timeout that is no number of seconds, ``submit`` with values
no database keeps. Each is refused with a clear error before anything is queued or stored,
or ends the run as documented."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

RAN: list[str] = []


@tool(requires_confirmation=True)
def drop_table() -> str:
    """Drops the table (asks first)."""
    RAN.append("drop_table")
    return "dropped"


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    script = [call_tool("drop_table"), reply("done")] * 10
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter(script),
        storage_dir=tmp_path_factory.mktemp("durable"),
        durable=True,
    )
    yield desk
    desk.close()


def _types(desk: Desk, run_id: str) -> list[str]:
    return [str(e.type) for e in desk.run_store.get_events(run_id)]


def test_cancel_ends_a_paused_run_failed_and_it_resumes_no_more(desk: Desk) -> None:
    worker = Worker(name="dba", tools=[drop_table])
    paused = desk.run(worker, "clean up")
    assert paused.status == "paused"

    desk.cancel(paused.run_id)

    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "failed"
    events = desk.run_store.get_events(paused.run_id)
    assert events[-1].type == "run.failed" and events[-1].payload["errors"] == ["run cancelled"]
    resumed = desk.resume(paused.run_id, True)
    assert resumed.status == "failed" and RAN == []  # the declined action never runs
    assert _types(desk, paused.run_id).count("run.failed") == 1


@pytest.mark.parametrize("run_id", ["no-such-run", "a\x00b", "a\ud800b", None])
def test_cancel_of_an_unknown_run_raises_and_stores_nothing(desk: Desk, run_id: Any) -> None:
    with pytest.raises(ConfigurationError, match="no durable run"):
        desk.cancel(run_id)
    if run_id == "no-such-run":
        assert desk.run_store.get_run(run_id) is None


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1, "5", True])
def test_result_refuses_a_timeout_that_is_no_number_of_seconds(desk: Desk, timeout: Any) -> None:
    run_id = desk.submit(Worker(name="quick"), "hello")
    started = time.monotonic()
    with pytest.raises(ConfigurationError, match="timeout"):
        desk.result(run_id, timeout=timeout)  # NaN waited for ever on a run still going
    assert time.monotonic() - started < 5
    assert desk.result(run_id, timeout=30).status == "completed"
    assert desk.result(run_id, timeout=0).status == "completed"  # 0: do not wait


@pytest.mark.parametrize("run_id", ["a\x00b", "a\ud800b"])
def test_result_of_an_id_no_store_keeps_is_an_unknown_run(desk: Desk, run_id: str) -> None:
    with pytest.raises(ConfigurationError, match="no durable run"):
        desk.result(run_id, timeout=1)


@pytest.mark.parametrize(
    "arguments",
    [
        {"priority": True},
        {"priority": 1.5},
        {"priority": "3"},
        {"queue": 5},
        {"queue": "a\x00b"},
        {"queue": "a\ud800b"},
        {"queue": "default:model-requests"},  # the queue admitting default's model calls
        {"timeout": 1e300},
    ],
)
def test_submit_refuses_a_value_no_database_keeps_before_queueing(
    desk: Desk, arguments: dict[str, Any]
) -> None:
    from dbos import DBOS

    before = len(DBOS.list_workflows(load_input=False, load_output=False))
    with pytest.raises(ValueError) as refused:
        desk.submit(Worker(name="quick"), "hello", **arguments)
    assert type(refused.value) in (ValueError, ConfigurationError)  # no driver's raw error
    assert len(DBOS.list_workflows(load_input=False, load_output=False)) == before
