"""A durable run's step records keep no secret an exception holds *outside* its text: DBOS
pickles a failed tool's exception (``ToolResult.original_exception``) and a failed model
call's, whole. An ``httpx.HTTPStatusError`` from ``raise_for_status()`` keeps its request,
``Authorization: Bearer ...`` header and all, while its message ("Client error '401
Unauthorized' for url ...") reads clean; so does an error keeping a provider's answer as a
dict."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import httpx

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

TOKEN = "tok-abcdefghijklmnopqrstuvwxyz0123456789"
KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _step_records(directory: Path) -> bytes:
    """Every step output and error DBOS keeps, decoded from its base64 text."""
    with sqlite3.connect(directory / "deskwork.dbos.db") as db:
        rows = db.execute("SELECT output, error FROM operation_outputs").fetchall()
    return b"\n".join(base64.b64decode(cell) for row in rows for cell in row if cell)


@tool()
def fetch(url: str) -> str:
    """Fetch a page of an API that needs a token."""
    request = httpx.Request("GET", url, headers={"Authorization": f"Bearer {TOKEN}"})
    httpx.Response(401, request=request, text="unauthorized").raise_for_status()
    return "never"


def test_a_tool_errors_request_headers_are_not_stored(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("fetch", url="https://api.example.com/x"), reply("ok")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w", tools=[fetch]), "go")
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "ok"), report.errors
    [call] = report.tool_calls
    assert call.result is not None and "401 Unauthorized" in str(call.result.error)
    records = _step_records(tmp_path)
    assert b"401 Unauthorized" in records  # the step's result is stored ...
    assert TOKEN.encode() not in records  # ... without the request's bearer token


class ProviderError(Exception):
    """An error keeping the provider's answer as a dict (as SDK errors keep ``body``)."""

    def __init__(self, message: str, body: dict[str, object]) -> None:
        super().__init__(message)
        self.body = body
        self.status_code = 401


def test_a_model_errors_kept_answer_is_not_stored(tmp_path: Path) -> None:
    class Refused(ScriptedAdapter):
        async def acomplete(self, **_: object) -> object:
            raise ProviderError("Error code: 401", {"error": {"message": f"bad key {KEY}"}})

    desk = Desk(model="m", adapter=Refused([]), storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(Worker(name="w"), "hi")
    finally:
        desk.close()
    assert report.status == "failed"
    assert report.errors[-1].endswith("ProviderError: Error code: 401")
    records = _step_records(tmp_path)
    assert b"ProviderError" in records and KEY.encode() not in records
