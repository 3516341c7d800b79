"""The API over real HTTP on a durable desk (DBOS), with SQLite and with PostgreSQL stores:
start (and wait), follow the events, resume a pause, cancel."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from serve_support import Live, make_desk, parse_sse, start_server

_SERVER = os.environ.get("DESKWORK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _fresh_postgres() -> tuple[str, Any]:
    """A new database on the test server and an admin connection (or skip)."""
    try:
        import psycopg

        admin = psycopg.connect(_SERVER, autocommit=True, connect_timeout=3)
    except Exception as exc:
        if os.environ.get("DESKWORK_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"DESKWORK_REQUIRE_POSTGRES=1 but no PostgreSQL at {_SERVER}: {exc}")
        pytest.skip(f"no PostgreSQL at {_SERVER}")
    name = f"deskwork_serve_{uuid.uuid4().hex[:12]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(_SERVER)._replace(path=f"/{name}")), admin


@pytest.fixture(params=["sqlite", "postgres"])
def durable_live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """A durable desk on SQLite or on a fresh PostgreSQL database, served over HTTP."""
    admin = None
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'deskwork.db'}"
    else:
        url, admin = _fresh_postgres()
    desk = make_desk(database_url=url, durable=True)
    live, thread = start_server(desk)
    try:
        yield live
    finally:
        live.server.should_exit = True
        thread.join(timeout=30)
        desk.close()
        if admin is not None:
            name = urlsplit(url).path.lstrip("/")
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.close()


async def _until(client: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for _ in range(500):
        body = (await client.get(f"/runs/{run_id}")).json()
        if body["status"] == status:
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {status}: {body}")


async def _events(client: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    """The frames of the run's event stream, which ends after the run's end (or its pause):
    a stream that does not end fails the test in 120 s instead of waiting on keep-alives
    (a keep-alive resets the client's read timeout) until CI's limit."""
    async with asyncio.timeout(120):
        return parse_sse((await client.get(f"/runs/{run_id}/events")).text)


async def test_start_wait_and_follow_a_durable_run(durable_live: Live) -> None:
    async with httpx.AsyncClient(base_url=durable_live.url, timeout=60) as client:
        waited = await client.post(
            "/runs?wait=true", json={"runner": "echo", "job": {"input": "hello"}}
        )
        assert waited.status_code == 200, waited.text
        assert (waited.json()["status"], waited.json()["content"]) == ("completed", "echo: hello")
        started = await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.3"}})
        assert started.json()["status"] == "running"
        run_id = started.json()["run_id"]
        frames = await _events(client, run_id)
        done = await _until(client, run_id, "completed")
    assert frames[-1]["event"] == "end" and frames[-1]["data"]["status"] == "completed"
    got = [f["data"]["event_id"] for f in frames if f["event"] == "message"]
    assert got == [e.event_id for e in durable_live.desk.run_store.get_events(run_id)]
    assert done["content"] == "done: waited"


async def test_a_durable_pause_resumes_over_http(durable_live: Live) -> None:
    async with httpx.AsyncClient(base_url=durable_live.url, timeout=60) as client:
        paused = await client.post(
            "/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}}
        )
        assert paused.json()["status"] == "paused", paused.text
        run_id = paused.json()["run_id"]
        tail = await _events(client, run_id)
        assert tail[-1]["event"] == "end" and tail[-1]["data"]["status"] == "paused"
        done = await client.post(f"/runs/{run_id}/resume?wait=true", json={"decision": True})
        assert done.status_code == 200, done.text
        assert done.json()["status"] == "completed"
        assert done.json()["content"] == "done: ordered 38 x beans"
        again = await client.post(f"/runs/{run_id}/resume", json={"decision": True})
        assert again.status_code == 409
    events = [e.type for e in durable_live.desk.run_store.get_events(run_id)]
    assert events.count("run.resumed") == 1 and events.count("tool.completed") == 2


async def test_cancel_a_running_and_a_paused_durable_run(durable_live: Live) -> None:
    async with httpx.AsyncClient(base_url=durable_live.url, timeout=60) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "30"}})
        ).json()["run_id"]
        cancelled = await client.post(f"/runs/{run_id}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "failed"
        assert cancelled.json()["errors"] == ["run cancelled"]
        tail = await _events(client, run_id)
        assert tail[-1]["event"] == "end" and tail[-1]["data"]["status"] == "failed"
        assert (await client.post(f"/runs/{run_id}/cancel")).status_code == 409
        paused = (
            await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        ).json()
        ended = await client.post(f"/runs/{paused['run_id']}/cancel")
        assert ended.json()["status"] == "failed" and ended.json()["pending_action"] is None
        refused = await client.post(f"/runs/{paused['run_id']}/resume", json={"decision": True})
        assert refused.status_code == 409


async def test_a_waiting_client_gets_the_cancelled_report(durable_live: Live) -> None:
    async with httpx.AsyncClient(base_url=durable_live.url, timeout=60) as client:
        body = {"runner": "sleeper", "job": {"input": "30"}}
        waiting = asyncio.create_task(client.post("/runs?wait=true", json=body))
        running: list[dict[str, Any]] = []
        while not running:
            await asyncio.sleep(0.05)
            running = (await client.get("/runs?status=running&runner=sleeper")).json()["runs"]
        await client.post(f"/runs/{running[0]['run_id']}/cancel")
        answer = await waiting
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "failed" and answer.json()["errors"] == ["run cancelled"]
