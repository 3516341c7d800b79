"""A secret a model streams split over two tokens never reaches a client in clear text:
not on a run's event stream (live, replayed or resumed mid-stream), a session's stream or
the AG-UI stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from serve_support import Live, parse_sse

from deskwork.adapters.base import StreamChunk
from deskwork.core.redact import redact_text
from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.store.session import InMemorySessionStore
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import reply

KEY = "sk-live-abcdefghijklmnopqrstuvwxyz0123456789"
PIECES = [
    "Your key is sk-li",  # the key split in two: neither piece is redacted on its own
    "ve-abcdefghijklmnopqrstuvwxyz0123456789 and the password=hun",
    "ter2x",
    " is set.",
    *(f" filler{i}" for i in range(30)),  # more than the hold-back window
    " Last one: sk-",
    "tail0123456789abcdef",  # a split key at the very end of the stream
]
TEXT = "".join(PIECES)
CLEAR = [KEY, "hunter2x", "sk-tail0123456789abcdef"]


class SplittingAdapter(ScriptedAdapter):
    """Answers ``TEXT``; streamed, in ``PIECES`` (secrets split across chunks)."""

    async def acomplete(self, *, stream: bool, **kwargs: Any) -> Any:
        response = await super().acomplete(stream=False, **kwargs)
        if not stream:
            return response
        return _chunks()


async def _chunks() -> AsyncIterator[StreamChunk]:
    for piece in PIECES:
        yield StreamChunk(content=piece)
    yield StreamChunk(finish_reason="stop", usage={"prompt_tokens": 5, "completion_tokens": 40})


def _desk() -> Desk:
    desk = Desk(
        model="scripted/test",
        adapter=SplittingAdapter(default=reply(TEXT)),
        run_store=InMemoryRunStore(),
        session_store=InMemorySessionStore(),
        stream=True,
    )
    desk.register(Worker(name="talker", instructions="Talk."))
    return desk


def _tokens(frames: list[dict[str, Any]]) -> str:
    return "".join(
        f["data"]["payload"]["token"]
        for f in frames
        if f["event"] == "message" and f["data"]["type"] == "stream.token"
    )


def _assert_safe(streamed: str, body: str) -> None:
    for secret in CLEAR:
        assert secret not in streamed and secret not in body
    assert streamed == redact_text(TEXT)  # nothing but the secrets is held back or lost


def test_the_stored_tokens_never_hold_a_split_key() -> None:
    """The runtime holds tokens back before they are stored: no half of a key is kept, and
    the stored tokens, joined, are the redacted answer."""
    desk = _desk()
    worker = desk.get_runner("worker", "talker")
    assert worker is not None
    run_id = desk.run(worker, "hi").run_id
    stored = desk.run_store.get_events(run_id)
    tokens = [e.payload["token"] for e in stored if e.type == "stream.token"]
    joined = "".join(tokens)
    assert joined == redact_text(TEXT)
    for secret in (*CLEAR, "sk-li", "hunter", "tail0123"):
        assert secret not in joined and all(secret not in t for t in tokens)
    assert len(tokens) >= 3 and all(tokens)
    types = [e.type for e in stored]
    assert types.index("llm.completed") > max(i for i, t in enumerate(types) if t == "stream.token")
    record = desk.run_store.get_run(run_id)
    assert record is not None and KEY not in (record.output or "")


async def test_run_events_never_carry_a_split_secret(live_factory: Any) -> None:
    live: Live = live_factory(_desk())
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        done = await client.post(
            "/runs?wait=true", json={"runner": "talker", "job": {"input": "x"}}
        )
        run_id = done.json()["run_id"]
        whole = await client.get(f"/runs/{run_id}/events")
        frames = parse_sse(whole.text)
        _assert_safe(_tokens(frames), whole.text)
        positions = [int(f["id"]) for f in frames if f["event"] == "message"]
        assert positions == list(range(len(live.desk.run_store.get_events(run_id))))
        tokens = [int(f["id"]) for f in frames if f.get("data", {}).get("type") == "stream.token"]
        for cut in (tokens[0], tokens[1], tokens[len(tokens) // 2], tokens[-2]):
            head = [f for f in frames if f["event"] == "message" and int(f["id"]) <= cut]
            rest = await client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": str(cut)})
            _assert_safe(_tokens(head + parse_sse(rest.text)), rest.text)


async def test_a_session_stream_never_carries_a_split_secret(live_factory: Any) -> None:
    live: Live = live_factory(_desk())
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        sid = (await client.post("/sessions", json={"runner": "talker"})).json()["session_id"]
        response = await client.post(f"/sessions/{sid}/messages", json={"message": "hi"})
    frames = parse_sse(response.text)
    _assert_safe(_tokens(frames), response.text)
    assert frames[-1]["event"] == "end"


async def test_the_agui_stream_never_carries_a_split_secret(live_factory: Any) -> None:
    pytest.importorskip("ag_ui")
    from ag_ui.core import EventType, RunAgentInput

    live: Live = live_factory(_desk())
    body = RunAgentInput(
        thread_id="t", run_id="agui-split", state=None, tools=[], context=[],
        messages=[{"id": "m1", "role": "user", "content": "hi"}],  # type: ignore[list-item]
        forwarded_props=None,
    )  # fmt: skip
    data = json.loads(body.model_dump_json(by_alias=True, exclude_none=True))
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        response = await client.post("/agui/talker", json=data)
    events = [json.loads(x[6:]) for x in response.text.splitlines() if x.startswith("data: ")]
    deltas = "".join(e["delta"] for e in events if e["type"] == EventType.TEXT_MESSAGE_CONTENT)
    _assert_safe(deltas, response.text)


def test_the_stream_guard_holds_back_tokens_the_store_kept_split() -> None:
    """Token events emitted outside a model step (or stored before the runtime held tokens
    back) still leave the server whole: same positions, no split secret, nothing lost."""
    from datetime import UTC, datetime

    from deskwork.core.event import Event
    from deskwork.serve._holdback import TokenGuard
    from deskwork.serve._hub import Outgoing

    def event(kind: str, payload: dict[str, Any]) -> Outgoing:
        return Outgoing(
            Event(
                event_id=kind,
                type=kind,
                timestamp=datetime.now(UTC),
                run_id="r",
                source="m",
                payload=payload,
            )
        )

    items = [event("stream.token", {"token": p, "type": "content"}) for p in PIECES]
    items.append(event("llm.completed", {}))
    guard = TokenGuard()
    out = [o for i, item in enumerate(items) for o in guard.feed(i, item)] + guard.close()
    assert [p for p, _ in out] == list(range(len(items)))
    texts = [str(o.event.payload.get("token", "")) for _, o in out[:-1]]
    assert "".join(texts) == redact_text(TEXT)
    assert all(secret not in t for secret in (*CLEAR, "hunter") for t in texts)
