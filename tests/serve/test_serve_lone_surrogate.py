"""Every reader of deskwork serve shows a run whose texts hold a lone surrogate
(``"\\ud800"``: a model's JSON with a cut emoji gives one; the stores keep it, UTF-8 cannot
encode it): 200 with JSON that escapes it (``\\ud800``, which a JSON reader turns back into
the text), where ``GET /runs/{id}``, the reports, a session's history and the AG-UI stream
were a 500 or a stream cut short. Ordinary non-ASCII text goes out as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from serve_support import parse_sse

pytest.importorskip("ag_ui")

from ag_ui.core import EventType

from deskwork import Desk, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.store.session import InMemorySessionStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.testing.scripted import Turn

CUT = "fin\ud800al"
SENT = "fin<cut>al"  # a request's text cannot hold a lone surrogate (pydantic refuses it)
PLAIN = "café 😀 中文"


def _echo(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    """A model answering "echo: <the input>", with its "<cut>" a cut emoji's lone half."""
    return reply(f"echo: {messages[-1].get('content')}".replace("<cut>", "\ud800"))


@pytest.fixture(params=["memory", "sqlite"])
def served(request: pytest.FixtureRequest, tmp_path: Path, live_factory: Any) -> Any:
    if request.param == "memory":
        stores: dict[str, Any] = {
            "run_store": InMemoryRunStore(),
            "session_store": InMemorySessionStore(),
        }
    else:
        stores = {"database_url": f"sqlite:///{tmp_path / 'deskwork.db'}"}
    desk = Desk(model="scripted/test", adapter=ScriptedAdapter(default=_echo), **stores)
    desk.register(Worker(name="echo", instructions="Echo the input."))
    return live_factory(desk)


def _body(data: dict[str, Any]) -> dict[str, Any]:
    """Request arguments sending ``data`` as JSON (escaped: httpx cannot encode a surrogate)."""
    return {"content": json.dumps(data), "headers": {"content-type": "application/json"}}


def _json(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return json.loads(response.content)


async def test_a_run_with_a_lone_surrogate_is_shown(served: Any) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        job = {"runner": "echo", "job": {"input": f"{PLAIN} {SENT}"}}
        report = _json(await client.post("/runs?wait=true", **_body(job)))
        assert report["status"] == "completed" and report["content"] == f"echo: {PLAIN} {CUT}"
        response = await client.get(f"/runs/{report['run_id']}")
        assert f"echo: {PLAIN} fin\\ud800al".encode() in response.content  # PLAIN as it is
        run = _json(response)
        assert run["content"] == f"echo: {PLAIN} {CUT}"
        assert [m["content"] for m in run["messages"]] == [f"{PLAIN} {SENT}", run["content"]]
        events = await client.get(f"/runs/{report['run_id']}/events")
        said = [f["data"] for f in parse_sse(events.text) if f["event"] == "message"]
        answer = next(d for d in said if d["type"] == "assistant.message")
        assert answer["payload"]["content"] == run["content"]

        plain = _json(
            await client.post("/runs?wait=true", **_body({**job, "job": {"input": PLAIN}}))
        )
        response = await client.get(f"/runs/{plain['run_id']}")
        assert f'"content":"echo: {PLAIN}"'.encode() in response.content  # not escaped
        assert _json(response)["content"] == f"echo: {PLAIN}"


async def test_a_session_with_a_lone_surrogate_is_shown(served: Any) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        session = _json(await client.post("/sessions", json={"runner": "echo"}))["session_id"]
        sent = {"message": SENT, "stream": "none"}
        report = _json(await client.post(f"/sessions/{session}/messages", **_body(sent)))
        assert report["content"] == f"echo: {CUT}"
        streamed = await client.post(f"/sessions/{session}/messages", **_body({"message": SENT}))
        assert parse_sse(streamed.text)[-1]["data"]["content"] == f"echo: {CUT}"
        history = _json(await client.get(f"/sessions/{session}/messages"))
        assert [m["content"] for m in history["messages"]] == [SENT, f"echo: {CUT}"] * 2


async def test_the_agui_stream_carries_a_lone_surrogate(served: Any) -> None:
    body = {
        "threadId": "t",
        "runId": "agui-cut",
        "messages": [{"id": "m1", "role": "user", "content": SENT}],
        "tools": [],
        "context": [],
    }
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        response = await client.post("/agui/echo", **_body(body))
    assert response.status_code == 200
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line[:6] == "data: "]
    assert events[-1]["type"] == EventType.RUN_FINISHED and events[-1]["result"] == f"echo: {CUT}"
    deltas = [e["delta"] for e in events if e["type"] == EventType.TEXT_MESSAGE_CONTENT]
    assert "".join(deltas) == f"echo: {CUT}"
