"""deskwork.testing.recorded: record LiteLLM's HTTP once, replay it offline, fail on misses."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from deskwork import Desk, Job, Report, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import (
    CassetteMissError,
    NetworkBlockedError,
    OpenAICompatServer,
    ServerReply,
    recorded,
    request_key,
)
from deskwork.tools import tool

pytest.importorskip("vcr")

API_KEY = "sk-live-secret-987654321"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _run(base_url: str, question: str, *, stream: bool) -> Report:
    adapter = LiteLLMAdapter(api_base=base_url, api_key=API_KEY)
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore(),
                stream=stream)  # fmt: skip
    return desk.run(Worker(name="calc", tools=[add]), Job(input=question))


@pytest.mark.parametrize("stream", [False, True])
def test_record_then_replay_offline(tmp_path: Path, stream: bool) -> None:
    cassette_path = tmp_path / "cassettes" / "calc.yaml"
    with OpenAICompatServer() as server:
        server.enqueue(ServerReply.tool_calls([("add", {"a": 2, "b": 3})]),
                       ServerReply.text("2 + 3 = 5"))  # fmt: skip
        with recorded(cassette_path, mode="record") as cassette:
            live = _run(server.base_url, "What is 2 + 3?", stream=stream)
        base_url = server.base_url
        assert len(server.requests) == 2
    assert live.status == "completed" and live.content == "2 + 3 = 5"
    assert cassette.mode == "record" and len(cassette.seen) == 2

    text = cassette_path.read_text()  # readable: the prompt, the key; never the API key
    assert "What is 2 + 3?" in text and "x-deskwork-request-key" in text
    assert API_KEY not in text and "authorization" not in text.lower()

    # the server is gone: the same test runs from the cassette alone
    with recorded(cassette_path, mode="replay") as cassette:
        replayed = _run(base_url, "What is 2 + 3?", stream=stream)
    assert replayed.status == "completed", replayed.errors
    assert replayed.content == "2 + 3 = 5"
    assert [c.result.content for c in replayed.tool_calls if c.result] == ["5"]
    assert cassette.misses == []


def test_a_request_without_recording_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with OpenAICompatServer() as server:
        server.enqueue(ServerReply.text("hi"))
        with recorded(path, mode="record"):
            _run(server.base_url, "hello", stream=False)
        base_url = server.base_url
    with pytest.raises(CassetteMissError) as caught, recorded(path, mode="replay"):
        report = _run(base_url, "a different question", stream=False)
        assert report.status == "failed"  # the model call itself got an error
    message = str(caught.value)
    assert "1 request(s) have no recording" in message and "/v1/chat/completions" in message
    assert "DESKWORK_RECORD=1" in message
    with pytest.raises(CassetteMissError, match=r"no cassette at .*DESKWORK_RECORD=1"):  # noqa: SIM117
        with recorded(tmp_path / "missing.yaml"):
            pass


def test_replay_blocks_the_network_and_the_env_var_turns_recording_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "empty.yaml"
    monkeypatch.setenv("DESKWORK_RECORD", "1")
    with recorded(path) as cassette:
        assert cassette.mode == "record"
    monkeypatch.delenv("DESKWORK_RECORD")
    original = socket.socket.connect
    with recorded(path) as cassette:
        assert cassette.mode == "replay"
        with pytest.raises(NetworkBlockedError, match="blocked while replaying"):
            socket.create_connection(("127.0.0.1", 9), timeout=1)
    assert socket.socket.connect is original  # restored after the block


def test_request_key_ignores_port_key_order_and_api_keys() -> None:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    reordered = b'{"messages": [{"content": "hi", "role": "user"}], "model": "m"}'
    key = request_key("POST", "http://127.0.0.1:4000/v1/chat/completions", body)
    assert key == request_key("post", "http://127.0.0.1:5111/v1/chat/completions", reordered)
    assert key == request_key("POST", "http://127.0.0.1/v1/chat/completions?key=sk-1", body)
    assert key != request_key("POST", "http://127.0.0.1/v1/chat/completions", reordered[:-2])
    assert key != request_key("POST", "http://example.com/v1/chat/completions", body)
    assert len(key) == 16
