"""A durable run's step records (DBOS pickles a failed step's exception, and a tool result's
``original_exception``, into its database) keep no secret an exception's text held; the run
reports the same redacted error as before."""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _step_records(directory: Path) -> bytes:
    """Every step output and error DBOS keeps, decoded from its base64 text."""
    with sqlite3.connect(directory / "deskwork.dbos.db") as db:
        rows = db.execute("SELECT output, error FROM operation_outputs").fetchall()
    return b"\n".join(base64.b64decode(cell) for row in rows for cell in row if cell)


def test_a_failed_model_steps_exception_is_stored_redacted(tmp_path: Path) -> None:
    class Broken(ScriptedAdapter):
        async def acomplete(self, **_: object) -> object:
            raise RuntimeError(f"401 for key {SECRET}")  # pickles: it was stored as it is

    desk = Desk(model="m", adapter=Broken([]), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w"), "hi")
    finally:
        desk.close()
    assert report.status == "failed"
    assert report.errors[-1].endswith("RuntimeError: 401 for key <redacted>")
    records = _step_records(tmp_path)
    assert b"RuntimeError" in records and SECRET.encode() not in records


@tool()
def fetch(url: str) -> str:
    """Fetch a page."""
    raise RuntimeError(f"auth failed with {SECRET}")


def test_a_failed_tool_steps_exception_is_stored_redacted(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("fetch", url="x"), reply("done")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w", tools=[fetch]), "go")
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "done")
    records = _step_records(tmp_path)
    assert b"auth failed with <redacted>" in records and SECRET.encode() not in records


class ServiceUnavailable(Exception):
    status_code = 503  # as a provider's error carries it: the desk retries it


def test_a_transient_error_that_quotes_a_secret_is_still_retried(tmp_path: Path) -> None:
    class Flaky(ScriptedAdapter):
        async def acomplete(self, **params: object) -> object:
            if not self.calls:
                self.calls.append(dict(params))
                raise ServiceUnavailable(f"upstream busy (api_key={SECRET})")
            return await super().acomplete(**params)

    adapter = Flaky([reply("done")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True, num_retries=1)
    try:
        report = desk.run(Worker(name="w"), "hi")
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "done"), report.errors
    records = _step_records(tmp_path)
    assert b"ServiceUnavailable" in records and SECRET.encode() not in records


def _noted(error: Exception) -> Exception:
    error.add_note(f"sent api_key={SECRET}")
    return error


@pytest.mark.parametrize(
    "error",
    [
        lambda: ExceptionGroup("calls failed", [RuntimeError(f"401 for key {SECRET}")]),
        lambda: _noted(RuntimeError("upstream failed")),
    ],
    ids=["group member", "note"],
)
def test_a_grouped_or_noted_secret_is_stored_redacted(
    tmp_path: Path, error: Callable[[], Exception]
) -> None:
    class Broken(ScriptedAdapter):  # a TaskGroup inside a provider's client, a note it adds
        async def acomplete(self, **_: object) -> object:
            raise error()

    desk = Desk(model="m", adapter=Broken([]), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w"), "hi")
    finally:
        desk.close()
    assert report.status == "failed"
    records = _step_records(tmp_path)
    assert b"<redacted>" in records and SECRET.encode() not in records
