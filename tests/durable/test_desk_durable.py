"""Durable runs in one process: same reports and events as without durability, submit/result,
cancel, and clear configuration errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

CALLS: list[int] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    CALLS.append(a + b)
    return a + b


def _script() -> ScriptedAdapter:
    return ScriptedAdapter([call_tool("add", a=1, b=2), reply("three")])


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[Desk]:
    desk = Desk(model="m", adapter=_script(), storage_dir=tmp_path / "d", durable=True)
    yield desk
    desk.close()


def _shape(events: list[Any]) -> list[tuple[str, str]]:
    return [(e.type, e.source) for e in events]


def test_durable_run_reports_and_stores_like_a_plain_run(tmp_path: Path, durable: Desk) -> None:
    plain = Desk(model="m", adapter=_script(), storage_dir=tmp_path / "p")
    worker = Worker(name="adder", tools=[add])
    try:
        expected = plain.run(worker, "add 1 and 2")
    finally:
        plain.close()
    CALLS.clear()

    report = durable.run(worker, "add 1 and 2", run_id="r-1")

    assert (report.status, report.content, report.run_id) == ("completed", "three", "r-1")
    assert CALLS == [3]
    assert _shape(report.events) == _shape(expected.events)
    assert _shape(durable.run_store.get_events("r-1")) == _shape(expected.events)
    record = durable.run_store.get_run("r-1")
    assert record is not None and (record.status, record.output) == ("completed", "three")
    from dbos import DBOS

    steps = [s["function_name"] for s in DBOS.list_workflow_steps("r-1")]
    call_id = report.tool_calls[0].id
    assert [name.rsplit(":", 1)[0] for name in steps] == [
        "deskwork.model:m",
        "deskwork.tool:add",
        "deskwork.model:m",
    ]
    assert steps[1] == f"deskwork.tool:add:{call_id}"


def test_on_event_sees_every_event_of_a_durable_run(durable: Desk) -> None:
    seen: list[str] = []
    adder = Worker(name="adder", tools=[add])
    report = durable.run(adder, "x", on_event=lambda e: seen.append(e.type))
    assert seen == [e.type for e in report.events]


def test_submit_returns_at_once_and_result_waits(durable: Desk) -> None:
    run_id = durable.submit(Worker(name="adder", tools=[add]), "add 1 and 2")
    report = durable.result(run_id, timeout=30)
    assert (report.run_id, report.status, report.content) == (run_id, "completed", "three")
    assert [e.type for e in report.events][-1] == "run.completed"
    assert [c.name for c in report.tool_calls] == ["add"]
    assert report.metrics["llm_calls"] == 2
    assert [m.role for m in report.messages][-1] == "assistant"


def test_cancel_a_queued_run_ends_it_failed(durable: Desk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKWORK_QUEUES", "")  # this process serves no queue: runs stay queued
    started = time.monotonic()
    run_id = durable.submit(Worker(name="adder", tools=[add]), "add", queue="idle")
    assert time.monotonic() - started < 10
    with pytest.raises(TimeoutError):
        durable.result(run_id, timeout=0.3)

    durable.cancel(run_id)

    report = durable.result(run_id, timeout=10)
    assert report.status == "failed"
    assert any("cancelled" in error for error in report.errors)
    record = durable.run_store.get_run(run_id)
    assert record is not None and record.status == "failed"


def test_recover_with_nothing_unfinished_returns_nothing(durable: Desk) -> None:
    assert durable.recover() == []


def test_durable_api_needs_a_durable_desk(tmp_path: Path) -> None:
    desk = Desk(model="m", adapter=_script(), storage_dir=tmp_path)
    try:
        with pytest.raises(ConfigurationError, match="durable=True"):
            desk.submit(Worker(name="adder", tools=[add]), "x")
    finally:
        desk.close()


def test_unreachable_database_names_the_url_without_its_password(tmp_path: Path) -> None:
    url = "postgresql://alice:s3cret@127.0.0.1:1/nowhere"
    desk = Desk(model="m", adapter=_script(), database_url=url, durable=True)
    try:
        with pytest.raises(ConfigurationError) as caught:
            desk.run(Worker(name="adder", tools=[add]), "x")
    finally:
        desk.close()
    assert "127.0.0.1:1/nowhere" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_closing_the_last_durable_desk_leaves_the_threads_event_loop_usable(
    tmp_path: Path,
) -> None:
    import asyncio

    from deskwork._sync import run_sync

    desk = Desk(model="m", adapter=_script(), storage_dir=tmp_path, durable=True)
    desk.run(Worker(name="adder", tools=[add]), "x")
    desk.close()  # DBOS stops, and with it the thread pool it lent to this thread's loop

    assert run_sync(asyncio.to_thread(lambda: 41 + 1)) == 42


class _Unpicklable(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        import threading

        self.lock = threading.Lock()  # a lock does not pickle


@tool
def flaky() -> str:
    """Fails with an exception that cannot be checkpointed as it is."""
    raise _Unpicklable("disk on fire")


def test_a_tool_failure_that_does_not_pickle_is_checkpointed_by_its_message(
    tmp_path: Path,
) -> None:
    adapter = ScriptedAdapter([call_tool("flaky"), reply("gave up")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w", tools=[flaky]), "try")
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "gave up")
    failed = [e for e in report.events if e.type == "tool.failed"]
    assert len(failed) == 1 and "disk on fire" in failed[0].payload["error"]


def test_a_model_error_that_does_not_pickle_fails_the_run_with_its_message(
    tmp_path: Path,
) -> None:
    def broken(messages: Any, tools: Any) -> Any:
        raise _Unpicklable("provider exploded")

    desk = Desk(
        model="m", adapter=ScriptedAdapter(default=broken), storage_dir=tmp_path, durable=True
    )
    try:
        report = desk.run(Worker(name="w"), "hi")
    finally:
        desk.close()
    assert report.status == "failed"
    assert any("_Unpicklable" in e and "provider exploded" in e for e in report.errors)


@pytest.mark.parametrize("options", [{"priority": 0}, {"priority": 2**31}, {"queue": " "}])
def test_submit_rejects_a_bad_priority_or_queue(durable: Desk, options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        durable.submit(Worker(name="adder", tools=[add]), "x", **options)


LAUNCHED: list[str] = []


@tool(requires_confirmation=True)
def launch(target: str) -> str:
    """Needs approval."""
    LAUNCHED.append(target)
    return f"launched {target}"


def test_a_durable_pause_resumes_in_the_same_process_once(tmp_path: Path) -> None:
    LAUNCHED.clear()
    adapter = ScriptedAdapter([call_tool("launch", target="moon"), reply("done")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    worker = Worker(name="ops", tools=[launch])
    try:
        paused = desk.run(worker, "go", run_id="pz")
        assert paused.status == "paused" and LAUNCHED == []
        seen: list[str] = []
        done = desk.resume(paused, "approve", on_event=lambda e: seen.append(e.type))
        again = desk.resume("pz", "approve")
        result = desk.result("pz", timeout=10)
        from dbos import DBOS

        resume_steps = [s["function_name"] for s in DBOS.list_workflow_steps("pz.resume.1")]
    finally:
        desk.close()
    assert (done.status, done.content) == ("completed", "done")
    assert LAUNCHED == ["moon"]
    assert seen[0] == "run.resumed" and seen[-1] == "run.completed"
    assert again.status == "failed" and "not paused" in again.errors[0]
    assert (result.status, result.content) == ("completed", "done")
    assert resume_steps[0] == "deskwork.begin"
    assert any(name.startswith("deskwork.tool:launch:") for name in resume_steps)


def test_a_streamed_durable_run_still_emits_its_tokens(durable: Desk) -> None:
    report = durable.run(Worker(name="adder", tools=[add]), "add", stream=True)
    assert (report.status, report.content) == ("completed", "three")
    tokens = [e.payload.get("token") for e in report.events if e.type == "stream.token"]
    assert "".join(t for t in tokens if isinstance(t, str)).endswith("three")


def test_one_durable_database_per_process(tmp_path: Path, durable: Desk) -> None:
    durable.run(Worker(name="adder", tools=[add]), "x")
    other = Desk(model="m", adapter=_script(), storage_dir=tmp_path / "other", durable=True)
    try:
        with pytest.raises(ConfigurationError, match="one durable database per process"):
            other.run(Worker(name="adder", tools=[add]), "x")
    finally:
        other.close()


def test_an_unusable_sqlite_location_is_a_configuration_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    desk = Desk(model="m", adapter=_script(), storage_dir=blocker / "sub", durable=True)
    try:
        with pytest.raises(ConfigurationError, match="cannot start durable runs"):
            desk.run(Worker(name="adder", tools=[add]), "x")
    finally:
        desk.close()


async def test_async_entry_points_and_concurrent_durable_runs(tmp_path: Path) -> None:
    import asyncio

    def model(messages: list[dict[str, Any]], tools: Any) -> Any:
        user = next(m for m in messages if m["role"] == "user")
        n = int(str(user["content"]))
        done = any(m["role"] == "tool" for m in messages)
        return reply(f"sum {n + n}") if done else call_tool("add", a=n, b=n)

    desk = Desk(
        model="m", adapter=ScriptedAdapter(default=model), storage_dir=tmp_path, durable=True
    )
    worker = Worker(name="adder", tools=[add])
    try:
        reports = await asyncio.gather(*(desk.arun(worker, str(n)) for n in range(6)))
        queued = desk.submit(worker, "10")
        later = await desk.aresult(queued, timeout=30)
        recovered = await desk.arecover()
    finally:
        desk.close()
    assert [r.content for r in reports] == [f"sum {n + n}" for n in range(6)]
    assert all(r.tool_calls[0].result.content == str(n + n) for n, r in enumerate(reports))  # type: ignore[union-attr]
    assert later.content == "sum 20"
    assert recovered == []
