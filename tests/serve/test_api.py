"""The HTTP API over real HTTP: uvicorn on 127.0.0.1 and an httpx client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from serve_support import SECRET, Live, parse_sse

from deskwork.core.job import Job


async def _until(client: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    for _ in range(200):
        body: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
        if body["status"] == status:
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} never reached {status}: {body}")


async def test_post_returns_at_once_then_the_run_completes(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        started = await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.3"}})
        assert started.status_code == 200
        assert started.json()["status"] == "running"
        run_id = started.json()["run_id"]
        seen = (await client.get(f"/runs/{run_id}")).json()
        assert seen["status"] == "running" and seen["runner"] == "sleeper"
        done = await _until(client, run_id, "completed")
        assert done["content"] == "done: waited"
        assert done["metrics"]["llm_calls"] == 2
        assert done["created_at"] <= done["updated_at"]


async def test_wait_returns_the_report(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        response = await client.post(
            "/runs?wait=true", json={"runner": "echo", "job": {"input": "hello"}}
        )
        report = response.json()
        assert report["status"] == "completed"
        assert report["content"] == "echo: hello"
        assert report["errors"] == [] and report["pending_action"] is None
        assert report["metrics"]["llm_calls"] == 1


async def test_bad_input_gets_clear_status_codes(live_factory: Any) -> None:
    live = live_factory(max_body_bytes=2000)
    async with httpx.AsyncClient(base_url=live.url) as client:
        unknown = await client.post("/runs", json={"runner": "nobody", "job": {"input": "x"}})
        assert unknown.status_code == 404 and "nobody" in unknown.json()["detail"]
        missing = await client.get("/runs/no-such-run")
        assert missing.status_code == 404 and "no-such-run" in missing.json()["detail"]
        assert (await client.get("/runs/no-such-run/events")).status_code == 404
        assert (await client.post("/runs/nope/resume", json={"decision": True})).status_code == 404
        malformed = await client.post(
            "/runs", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert malformed.status_code == 422
        assert (await client.post("/runs", json={"runner": "echo"})).status_code == 422
        extra = await client.post("/runs", json={"runner": "echo", "job": {"input": 1, "x": 2}})
        assert extra.status_code == 422
        big = await client.post("/runs", json={"runner": "echo", "job": {"input": "x" * 5000}})
        assert big.status_code == 413

        async def chunks() -> Any:
            for _ in range(10):
                yield b"x" * 500

        chunked = await client.post("/runs", content=chunks())
        assert chunked.status_code == 413
        assert (await client.get("/runs?status=bogus")).status_code == 422
        empty = await client.post("/runs", json={"runner": "echo", "job": {"input": ""}})
        assert empty.status_code == 422 and "input" in empty.json()["detail"]


async def test_approval_pauses_and_resume_completes(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        paused = (
            await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        ).json()
        assert paused["status"] == "paused"
        action = paused["pending_action"]
        assert action["type"] == "confirmation" and action["tool_call"]["name"] == "restock"
        run_id = paused["run_id"]
        assert (await client.get(f"/runs/{run_id}")).json()["pending_action"] == action
        done = await client.post(f"/runs/{run_id}/resume?wait=true", json={"decision": True})
        assert done.json()["status"] == "completed"
        assert done.json()["content"] == "done: ordered 38 x beans"
        again = await client.post(f"/runs/{run_id}/resume", json={"decision": True})
        assert again.status_code == 409 and "not paused" in again.json()["detail"]


async def test_two_resumes_race_one_wins(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        paused = (
            await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        ).json()
        run_id = paused["run_id"]
        answers = await asyncio.gather(
            *(
                client.post(f"/runs/{run_id}/resume?wait=true", json={"decision": True})
                for _ in range(4)
            )
        )
        codes = sorted(a.status_code for a in answers)
        assert codes == [200, 409, 409, 409]
        events = live.desk.run_store.get_events(run_id)
        assert [e.type for e in events].count("run.resumed") == 1
        assert [e.type for e in events].count("tool.completed") == 2  # lookup, restock once


async def test_events_replay_then_follow_and_resume_with_last_event_id(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.4"}})
        ).json()["run_id"]
        response = await client.get(f"/runs/{run_id}/events")
        assert response.headers["content-type"].startswith("text/event-stream")
        frames = parse_sse(response.text)
        events = [f for f in frames if f["event"] == "message"]
        assert [int(f["id"]) for f in events] == list(range(len(events)))
        types = [f["data"]["type"] for f in events]
        assert types[0] == "run.started" and types[-1] == "run.completed"
        assert "tool.completed" in types
        assert frames[-1]["event"] == "end" and frames[-1]["data"]["status"] == "completed"
        stored = live.desk.run_store.get_events(run_id)
        assert [f["data"]["event_id"] for f in events] == [e.event_id for e in stored]

        rest = await client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "3"})
        resumed = [f for f in parse_sse(rest.text) if f["event"] == "message"]
        assert [f["data"]["event_id"] for f in resumed] == [e.event_id for e in stored[4:]]
        assert resumed[0]["id"] == "4"


async def test_a_reconnecting_client_misses_nothing(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.5"}})
        ).json()["run_id"]
        got: list[dict[str, Any]] = []
        async with client.stream("GET", f"/runs/{run_id}/events") as first:
            async for line in first.aiter_lines():
                if line.startswith("data: "):
                    got.append(json.loads(line[6:]))
                if len(got) == 3:
                    break  # disconnect mid-stream
        last = got[-1]["position"]
        second = await client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": str(last)})
        got += [f["data"] for f in parse_sse(second.text) if f["event"] == "message"]
        stored = live.desk.run_store.get_events(run_id)
        assert [g["event_id"] for g in got] == [e.event_id for e in stored]
        assert stored[-1].type == "run.completed"


async def test_a_client_that_disconnects_does_not_stop_the_run(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.3"}})
        ).json()["run_id"]
        async with client.stream("GET", f"/runs/{run_id}/events") as stream:
            async for line in stream.aiter_lines():
                if "tool.started" in line:
                    break
        done = await _until(client, run_id, "completed")
        assert done["content"] == "done: waited"


async def test_concurrent_clients_get_the_same_stream(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "0.3"}})
        ).json()["run_id"]
        bodies = await asyncio.gather(*(client.get(f"/runs/{run_id}/events") for _ in range(12)))
        streams = [
            [f["data"]["event_id"] for f in parse_sse(b.text) if f["event"] == "message"]
            for b in bodies
        ]
        stored = [e.event_id for e in live.desk.run_store.get_events(run_id)]
        assert all(s == stored for s in streams)


async def test_cancel_a_running_and_a_paused_run(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        run_id = (
            await client.post("/runs", json={"runner": "sleeper", "job": {"input": "30"}})
        ).json()["run_id"]
        cancelled = await client.post(f"/runs/{run_id}/cancel")
        assert cancelled.json()["status"] == "failed"
        assert cancelled.json()["errors"] == ["run cancelled"]
        again = await client.post(f"/runs/{run_id}/cancel")
        assert again.status_code == 409
        paused = (
            await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        ).json()
        ended = (await client.post(f"/runs/{paused['run_id']}/cancel")).json()
        assert ended["status"] == "failed" and ended["pending_action"] is None
        tail = parse_sse((await client.get(f"/runs/{paused['run_id']}/events")).text)
        assert tail[-1]["data"]["status"] == "failed"


async def test_list_filters_and_pages(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        for word in ("a", "b", "c"):
            await client.post("/runs?wait=true", json={"runner": "echo", "job": {"input": word}})
        await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        paused = (await client.get("/runs?status=paused")).json()["runs"]
        assert [r["runner"] for r in paused] == ["clerk"]
        first = (await client.get("/runs?runner=echo&limit=2")).json()
        assert len(first["runs"]) == 2 and first["next_offset"] == 2
        second = (await client.get("/runs?runner=echo&limit=2&offset=2")).json()
        assert len(second["runs"]) == 1 and second["next_offset"] is None
        ids = {r["run_id"] for r in first["runs"] + second["runs"]}
        assert len(ids) == 3
        runners = (await client.get("/runners")).json()
        assert {"name": "clerk", "runner_type": "worker"} in runners


async def test_token_is_required_and_reveals_nothing(live_factory: Any) -> None:
    live = live_factory(token="s3cret-token")
    auth = {"Authorization": "Bearer s3cret-token"}
    async with httpx.AsyncClient(base_url=live.url) as client:
        ok = await client.post(
            "/runs?wait=true", json={"runner": "echo", "job": {"input": "x"}}, headers=auth
        )
        run_id = ok.json()["run_id"]
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
            known = await client.get(f"/runs/{run_id}", headers=headers)
            unknown = await client.get("/runs/nope", headers=headers)
            assert known.status_code == unknown.status_code == 401
            assert known.json() == unknown.json()
            assert known.headers["www-authenticate"] == "Bearer"
        assert (await client.get(f"/runs/{run_id}", headers=auth)).status_code == 200
        assert (await client.get("/")).status_code == 200  # the viewer page holds no data


async def test_no_secret_in_any_response(live: Live) -> None:
    job = {"input": f"use key {SECRET}", "metadata": {"api_key": SECRET}}
    async with httpx.AsyncClient(base_url=live.url) as client:
        report = await client.post("/runs?wait=true", json={"runner": "echo", "job": job})
        run_id = report.json()["run_id"]
        bodies = [
            (await client.get(f"/runs/{run_id}")).text,
            (await client.get(f"/runs/{run_id}/events")).text,
            (await client.get("/runs")).text,
        ]
        assert run_id in bodies[0]
        for body in bodies:
            assert SECRET not in body
        assert SECRET not in report.text


async def test_sessions_stream_tokens_and_keep_history(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        session = (await client.post("/sessions", json={"runner": "echo"})).json()
        sid = session["session_id"]
        first = await client.post(f"/sessions/{sid}/messages", json={"message": "hi"})
        frames = parse_sse(first.text)
        tokens = "".join(
            f["data"]["payload"].get("token", "") or f["data"]["payload"].get("content", "")
            for f in frames
            if f["data"].get("type") == "stream.token"
        )
        assert tokens == "echo: hi"
        assert frames[-1]["event"] == "end" and frames[-1]["data"]["content"] == "echo: hi"
        second = await client.post(
            f"/sessions/{sid}/messages", json={"message": "again", "stream": "none"}
        )
        assert second.json()["content"] == "echo: again"
        history = (await client.get(f"/sessions/{sid}/messages")).json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
        assert (await client.get("/sessions/nope/messages")).status_code == 404
        clash = await client.post("/sessions", json={"runner": "clerk", "session_id": sid})
        assert clash.status_code == 409


@pytest.mark.parametrize("path", ["/openapi.json"])
async def test_openapi_document_lists_the_api(live: Live, path: str) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        doc = (await client.get(path)).json()
    for route in ("/runs", "/runs/{run_id}", "/runs/{run_id}/events", "/runs/{run_id}/resume"):
        assert route in doc["paths"]
    assert "RunIn" in doc["components"]["schemas"]


async def test_cors_is_off_unless_configured(live_factory: Any) -> None:
    preflight = {
        "Origin": "http://app.example",
        "Access-Control-Request-Method": "POST",
    }
    closed = live_factory()
    opened = live_factory(cors_origins=["http://app.example"], token="t0k")
    async with httpx.AsyncClient() as client:
        off = await client.get(closed.url + "/runs", headers={"Origin": "http://app.example"})
        assert "access-control-allow-origin" not in off.headers
        on = await client.options(opened.url + "/runs", headers=preflight)
        assert on.headers["access-control-allow-origin"] == "http://app.example"
        auth = {"Authorization": "Bearer t0k"}
        other = await client.get(
            opened.url + "/runs", headers={"Origin": "http://evil.example", **auth}
        )
        assert other.status_code == 200
        assert "access-control-allow-origin" not in other.headers


async def test_a_run_started_inside_a_run_is_linked_both_ways(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        parent = (
            await client.post(
                "/runs?wait=true", json={"runner": "delegator", "job": {"input": "x"}}
            )
        ).json()
        assert parent["content"] == "done: echo: beans"
        view = (await client.get(f"/runs/{parent['run_id']}")).json()
        [child_id] = view["child_run_ids"]
        child = (await client.get(f"/runs/{child_id}")).json()
        assert child["parent_run_id"] == parent["run_id"]
        assert child["runner"] == "echo" and child["child_run_ids"] == []
        assert view["parent_run_id"] is None


async def test_resuming_a_run_whose_runner_is_gone_is_409_and_stays_paused(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        paused = (
            await client.post("/runs?wait=true", json={"runner": "clerk", "job": {"input": "go"}})
        ).json()
        clerk = live.desk.get_runner("worker", "clerk")
        assert clerk is not None
        live.desk.unregister(clerk)
        refused = await client.post(f"/runs/{paused['run_id']}/resume", json={"decision": True})
        assert refused.status_code == 409 and "not registered" in refused.json()["detail"]
        assert (await client.get(f"/runs/{paused['run_id']}")).json()["status"] == "paused"


async def test_runs_of_another_desk_on_the_same_store_are_followed(
    live_factory: Any, tmp_path: Any
) -> None:
    from serve_support import make_desk

    url = f"sqlite:///{tmp_path / 'shared.db'}"
    live = live_factory(make_desk(database_url=url))
    other = make_desk(database_url=url)  # as another process would: same database, own bus
    sleeper = other.get_runner("worker", "sleeper")
    assert sleeper is not None
    run = asyncio.create_task(
        asyncio.to_thread(other.run, sleeper, Job(input="0.6"), run_id="ext-1")
    )
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as client:
        while (await client.get("/runs/ext-1")).status_code == 404:
            await asyncio.sleep(0.02)
        response = await client.get("/runs/ext-1/events")
    frames = parse_sse(response.text)
    assert frames[-1]["event"] == "end" and frames[-1]["data"]["status"] == "completed"
    got = [f["data"]["event_id"] for f in frames if f["event"] == "message"]
    await run
    assert got == [e.event_id for e in other.run_store.get_events("ext-1")]
    other.close()
