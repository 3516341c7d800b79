"""A failing event subscriber is logged (event type, handler name) and never breaks the run."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Event, Job, Worker
from deskwork.event_bus import LOGGER_NAME
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(json.loads(record.getMessage()))


@pytest.fixture
def log_lines() -> Iterator[list[dict[str, Any]]]:
    handler = _Lines()
    logger = logging.getLogger(LOGGER_NAME)
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


def _desk() -> Desk:
    return Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([reply("done")]),
        run_store=InMemoryRunStore(),
    )


def broken_sync_handler(event: Event) -> None:
    raise RuntimeError("sync handler broke")


async def broken_async_handler(event: Event) -> None:
    raise ValueError("async handler broke")


def test_a_failing_sync_subscriber_is_logged_and_the_run_completes(
    log_lines: list[dict[str, Any]],
) -> None:
    desk = _desk()
    desk.event_bus.subscribe("run.started", broken_sync_handler)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert (report.status, report.content) == ("completed", "done")
    (line,) = log_lines
    assert line["level"] == "ERROR"
    assert line["event_type"] == "run.started"
    assert line["handler"].endswith("broken_sync_handler")
    assert line["error_type"] == "RuntimeError"
    assert line["run_id"] == report.run_id
    assert len(desk.event_bus.get_errors()) == 1


def test_a_failing_async_subscriber_is_logged_and_the_run_completes(
    log_lines: list[dict[str, Any]],
) -> None:
    desk = _desk()
    desk.event_bus.subscribe("*", broken_async_handler)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert report.status == "completed"
    assert len(log_lines) == len(report.events)  # one line per event the handler saw
    assert {line["event_type"] for line in log_lines} == {e.type for e in report.events}
    assert all(line["handler"].endswith("broken_async_handler") for line in log_lines)
    assert all(line["error_type"] == "ValueError" for line in log_lines)


async def test_async_runs_log_async_subscriber_failures_too(
    log_lines: list[dict[str, Any]],
) -> None:
    desk = _desk()
    desk.event_bus.subscribe("run.completed", broken_async_handler)
    report = await desk.arun(Worker(name="w"), Job(input="hi"))
    await desk.event_bus.await_pending()
    assert report.status == "completed"
    assert [line["event_type"] for line in log_lines] == ["run.completed"]


def test_a_failing_on_event_listener_is_logged(log_lines: list[dict[str, Any]]) -> None:
    desk = _desk()
    report = desk.run(Worker(name="w"), Job(input="hi"), on_event=broken_sync_handler)
    assert report.status == "completed"
    assert len(log_lines) == len(report.events)
    assert log_lines[0]["event_type"] == "run.started"


def test_a_secret_in_a_handler_error_is_not_logged(log_lines: list[dict[str, Any]]) -> None:
    def leaky(event: Event) -> None:
        raise RuntimeError("auth failed for api_key=sk-abcdefghijklmnop")

    desk = _desk()
    desk.event_bus.subscribe("run.started", leaky)
    desk.run(Worker(name="w"), Job(input="hi"))
    assert "sk-abcdefghijklmnop" not in json.dumps(log_lines)
    assert log_lines[0]["handler"].endswith("leaky")
