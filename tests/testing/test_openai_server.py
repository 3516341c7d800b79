"""Tests for deskwork.testing.openai_server: raw HTTP (httpx) and the real LiteLLM path."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest

from deskwork.testing.openai_server import OpenAICompatServer, RecordedRequest, ServerReply

# LiteLLM fetches its model cost map from the internet at import time unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

USER = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def client(server: OpenAICompatServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        yield http


def chat(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post("/chat/completions", json={"model": "test-model", "messages": USER, **body})


def sse_events(response: httpx.Response) -> list[str]:
    """The ``data:`` payloads of an SSE body, in order."""
    blocks = [block for block in response.text.split("\n\n") if block]
    assert all(block.startswith("data: ") for block in blocks), blocks
    return [block.removeprefix("data: ") for block in blocks]


def stream_chunks(client: httpx.Client, **body: Any) -> tuple[list[dict[str, Any]], list[str]]:
    response = chat(client, stream=True, **body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response)
    return [json.loads(event) for event in events if event != "[DONE]"], events


def reassemble(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Fold streamed deltas back into one message, like an OpenAI client does."""
    content, reasoning = "", ""
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls", []):
                slot = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.get("id", slot["id"])
                slot["name"] += call.get("function", {}).get("name", "")
                slot["arguments"] += call["function"].get("arguments", "")
    return {"content": content, "reasoning": reasoning, "calls": [calls[i] for i in sorted(calls)]}


# -- non-streamed chat completions -------------------------------------------------------------


def test_text_reply_has_openai_shape(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("Hello there, friend."))
    response = chat(client, model="my-model")
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int)
    assert body["model"] == "my-model"
    choice = body["choices"][0]
    assert choice["index"] == 0
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == "Hello there, friend."
    assert "tool_calls" not in choice["message"]
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_explicit_usage_reasoning_and_finish_reason(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 22}
    reply = ServerReply.text("cut", reasoning="thinking", usage=usage, finish_reason="length")
    server.enqueue(reply)
    body = chat(client).json()
    assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 22, "total_tokens": 33}
    assert body["choices"][0]["message"]["reasoning_content"] == "thinking"
    assert body["choices"][0]["finish_reason"] == "length"


def test_json_reply_content_is_json(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.json({"answer": 42, "items": ["a"]}))
    content = chat(client).json()["choices"][0]["message"]["content"]
    assert json.loads(content) == {"answer": 42, "items": ["a"]}


def test_tool_calls_reply_keeps_raw_arguments(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    server.enqueue(ServerReply.tool_calls([("search", {"q": "cats"}), ("broken", '{"q": "unterm')]))
    message = chat(client).json()["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    calls = message["message"]["tool_calls"]
    assert message["message"]["content"] is None
    assert [c["id"] for c in calls] == ["call_1", "call_2"]
    assert all(c["type"] == "function" for c in calls)
    assert calls[0]["function"] == {"name": "search", "arguments": '{"q": "cats"}'}
    assert calls[1]["function"] == {"name": "broken", "arguments": '{"q": "unterm'}


def test_tool_call_ids_are_unique_across_requests(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    server.enqueue(ServerReply.tool_calls([("a", {})]), ServerReply.tool_calls([("a", {})]))
    first = chat(client).json()["choices"][0]["message"]["tool_calls"][0]["id"]
    second = chat(client).json()["choices"][0]["message"]["tool_calls"][0]["id"]
    assert first != second


def test_tool_calls_with_content(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.tool_calls([("a", "{}")], content="Let me look."))
    message = chat(client).json()["choices"][0]["message"]
    assert message["content"] == "Let me look."
    assert message["tool_calls"][0]["function"]["arguments"] == "{}"


# -- streaming ---------------------------------------------------------------------------------


def test_stream_text_reassembles_and_ends_with_done(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    server.enqueue(ServerReply.text(text, reasoning="Step one. Step two."))
    chunks, events = stream_chunks(client)
    assert events[-1] == "[DONE]"
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk["id"] for chunk in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    content_deltas = [c for c in chunks if c["choices"] and "content" in c["choices"][0]["delta"]]
    assert len(content_deltas) == len(text.split())  # one delta per word
    assert chunks[-1]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert all(chunk["choices"][0]["finish_reason"] is None for chunk in chunks[:-1])
    assert all("usage" not in chunk for chunk in chunks)
    assert reassemble(chunks) == {"content": text, "reasoning": "Step one. Step two.", "calls": []}


def test_stream_single_word_still_splits(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("Supercalifragilistic"))
    chunks, _ = stream_chunks(client)
    pieces = [
        c["choices"][0]["delta"]["content"] for c in chunks if "content" in c["choices"][0]["delta"]
    ]
    assert len(pieces) >= 2
    assert "".join(pieces) == "Supercalifragilistic"


def test_stream_tool_calls_reassemble(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(
        ServerReply.tool_calls([("search", {"query": "weather in Paris"}), ("bad", "{x")])
    )
    chunks, events = stream_chunks(client)
    assert events[-1] == "[DONE]"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    call_deltas = [
        call
        for c in chunks
        if c["choices"]
        for call in c["choices"][0]["delta"].get("tool_calls", [])
    ]
    first = call_deltas[0]
    assert first["id"] == "call_1" and first["type"] == "function"
    assert first["function"] == {"name": "search", "arguments": ""}
    argument_pieces = [d for d in call_deltas if d["index"] == 0 and "id" not in d]
    assert len(argument_pieces) >= 2
    assert all(set(d["function"]) == {"arguments"} for d in argument_pieces)
    assert reassemble(chunks)["calls"] == [
        {"id": "call_1", "name": "search", "arguments": '{"query": "weather in Paris"}'},
        {"id": "call_2", "name": "bad", "arguments": "{x"},
    ]


def test_stream_include_usage_adds_usage_chunk(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    server.enqueue(
        ServerReply.text("one two three", usage={"prompt_tokens": 5, "completion_tokens": 3})
    )
    chunks, events = stream_chunks(client, stream_options={"include_usage": True})
    assert events[-1] == "[DONE]"
    last = chunks[-1]
    assert last["choices"] == []
    assert last["usage"] == {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert all(chunk["usage"] is None for chunk in chunks[:-1])


def test_stream_error_reply_is_plain_json(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.error(503, "overloaded"))
    response = chat(client, stream=True)
    assert response.status_code == 503
    assert response.json()["error"]["message"] == "overloaded"


# -- errors --------------------------------------------------------------------------------------


def test_error_reply_status_and_body(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(
        ServerReply.error(
            429,
            "Rate limit reached",
            type="rate_limit_error",
            code="rate_limit_exceeded",
            headers={"retry-after": "7"},
        )
    )
    response = chat(client)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json() == {
        "error": {
            "message": "Rate limit reached",
            "type": "rate_limit_error",
            "code": "rate_limit_exceeded",
            "param": None,
        }
    }


def test_context_length_exceeded_body(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.context_length_exceeded())
    response = chat(client)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "context_length_exceeded"
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("This model's maximum context length is 128000 tokens.")
    assert "However, your messages resulted in" in error["message"]


def test_unknown_path_is_404(client: httpx.Client) -> None:
    response = client.post("/nope", json={})
    assert response.status_code == 404
    assert "error" in response.json()
    assert client.get("/chat/completions").status_code == 404


def test_malformed_json_is_400(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("unused"))
    response = client.post(
        "/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert client.post("/chat/completions", json=[1, 2]).status_code == 400
    assert server.pending == 1  # a rejected request does not consume a reply


def test_handler_exception_answers_500_and_server_survives(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    def explode(request: RecordedRequest) -> ServerReply:
        raise ValueError("handler bug")

    server.set_handler(explode)
    response = chat(client)
    assert response.status_code == 500
    assert "handler bug" in response.json()["error"]["message"]
    server.set_handler(None)
    assert chat(client).json()["choices"][0]["message"]["content"] == "ok"


# -- scripting and recording ---------------------------------------------------------------------


def test_requests_are_recorded_with_authorization_redacted(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    client.post(
        "/chat/completions",
        json={"model": "m", "messages": USER, "temperature": 0.5},
        headers={"Authorization": "Bearer sk-secret", "X-Custom": "yes"},
    )
    (recorded,) = server.requests
    assert recorded.method == "POST"
    assert recorded.path == "/v1/chat/completions"
    assert recorded.body == {"model": "m", "messages": USER, "temperature": 0.5}
    assert recorded.headers["authorization"] == "<redacted>"
    assert recorded.headers["x-custom"] == "yes"
    assert "sk-secret" not in repr(recorded)
    server.clear()
    assert server.requests == []


def test_requests_property_returns_a_copy(server: OpenAICompatServer, client: httpx.Client) -> None:
    chat(client)
    server.requests.clear()
    assert len(server.requests) == 1


def test_replies_are_fifo_then_default_ok(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("first"), ServerReply.text("second"))
    server.enqueue(ServerReply.text("third"))
    answers = [chat(client).json()["choices"][0]["message"]["content"] for _ in range(4)]
    assert answers == ["first", "second", "third", "ok"]


def test_handler_answers_when_queue_is_empty(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    server.set_handler(
        lambda request: ServerReply.text(f"echo {request.body['messages'][-1]['content']}")
    )
    server.enqueue(ServerReply.text("queued"))
    assert chat(client).json()["choices"][0]["message"]["content"] == "queued"
    assert chat(client).json()["choices"][0]["message"]["content"] == "echo hello"


def test_default_reply_and_default_handler() -> None:
    with OpenAICompatServer(default=ServerReply.text("fallback")) as srv:
        response = httpx.post(f"{srv.base_url}/chat/completions", json={"messages": USER})
        assert response.json()["choices"][0]["message"]["content"] == "fallback"
    with OpenAICompatServer(default=lambda request: ServerReply.text(request.path)) as srv:
        srv.set_handler(lambda request: ServerReply.text("handler wins"))
        response = httpx.post(f"{srv.base_url}/chat/completions", json={"messages": USER})
        assert response.json()["choices"][0]["message"]["content"] == "handler wins"
        srv.set_handler(None)
        response = httpx.post(f"{srv.base_url}/chat/completions", json={"messages": USER})
        assert response.json()["choices"][0]["message"]["content"] == "/v1/chat/completions"


def test_clear_drops_queued_replies(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("stale"))
    server.clear()
    assert server.pending == 0
    assert chat(client).json()["choices"][0]["message"]["content"] == "ok"


def test_delay_postpones_the_answer(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("slow", delay=0.3))
    started = time.perf_counter()
    chat(client)
    assert time.perf_counter() - started >= 0.3
    server.enqueue(ServerReply.text("slow", delay=2.0))
    with pytest.raises(httpx.ReadTimeout):
        client.post("/chat/completions", json={"messages": USER}, timeout=0.2)


async def test_concurrent_requests_are_served_in_parallel(server: OpenAICompatServer) -> None:
    all_in = threading.Barrier(4, timeout=30)  # broken (HTTP 500) unless served at once

    def meet(request: Any) -> ServerReply:
        all_in.wait()
        return ServerReply.text("slow")

    server.set_handler(meet)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        responses = await asyncio.gather(
            *(http.post("/chat/completions", json={"messages": USER}) for _ in range(4))
        )
    assert [r.status_code for r in responses] == [200] * 4
    assert len(server.requests) == 4


def test_path_without_v1_prefix_is_accepted(server: OpenAICompatServer) -> None:
    base = server.base_url.removesuffix("/v1")
    server.enqueue(ServerReply.text("no prefix"))
    response = httpx.post(f"{base}/chat/completions", json={"messages": USER})
    assert response.json()["choices"][0]["message"]["content"] == "no prefix"


# -- other endpoints -------------------------------------------------------------------------------


def test_models_endpoint() -> None:
    with OpenAICompatServer(model_ids=["a", "b"]) as srv:
        body = httpx.get(f"{srv.base_url}/models").json()
        assert body["object"] == "list"
        assert [m["id"] for m in body["data"]] == ["a", "b"]
        assert all(m["object"] == "model" for m in body["data"])
        assert httpx.get(f"{srv.base_url}/models/a").json()["id"] == "a"
        assert httpx.get(f"{srv.base_url}/models/zzz").status_code == 404


def test_images_endpoint_returns_png(server: OpenAICompatServer, client: httpx.Client) -> None:
    server.enqueue(ServerReply.text("not consumed by images"))
    body = client.post("/images/generations", json={"prompt": "a red cube", "n": 2}).json()
    assert isinstance(body["created"], int)
    assert len(body["data"]) == 2
    assert body["data"][0]["revised_prompt"] == "a red cube"
    assert base64.b64decode(body["data"][0]["b64_json"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert server.pending == 1


def test_embeddings_are_deterministic(client: httpx.Client) -> None:
    body = client.post("/embeddings", json={"model": "emb", "input": ["a", "b", "a"]}).json()
    assert body["object"] == "list" and body["model"] == "emb"
    vectors = [item["embedding"] for item in body["data"]]
    assert [item["index"] for item in body["data"]] == [0, 1, 2]
    assert len(vectors[0]) == 8
    assert vectors[0] == vectors[2] != vectors[1]
    single = client.post("/embeddings", json={"input": "a"}).json()["data"]
    assert single[0]["embedding"] == vectors[0]
    encoded = client.post("/embeddings", json={"input": "a", "encoding_format": "base64"}).json()
    decoded = struct.unpack("<8f", base64.b64decode(encoded["data"][0]["embedding"]))
    assert decoded == pytest.approx(vectors[0], abs=1e-6)


# -- lifecycle -------------------------------------------------------------------------------------


def test_lifecycle() -> None:
    srv = OpenAICompatServer()
    with pytest.raises(RuntimeError):
        _ = srv.base_url
    assert srv.start() is srv
    url = srv.base_url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert httpx.get(f"{url}/models").status_code == 200
    srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models")


async def test_async_context_manager() -> None:
    async with OpenAICompatServer() as srv, httpx.AsyncClient(base_url=srv.base_url) as http:
        srv.enqueue(ServerReply.text("async"))
        response = await http.post("/chat/completions", json={"messages": USER})
        assert response.json()["choices"][0]["message"]["content"] == "async"


# -- the real LiteLLM path -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def litellm() -> Iterator[ModuleType]:
    import litellm as module

    previous = module.suppress_debug_info
    module.suppress_debug_info = True  # no "Give Feedback" banners on expected errors
    yield module
    module.suppress_debug_info = previous


def llm_kwargs(server: OpenAICompatServer, *, sdk_retries: bool = False) -> dict[str, Any]:
    # "openai/<id>" selects LiteLLM's OpenAI provider, which sends "<id>" as the model and
    # honours api_base; no custom_llm_provider is needed. max_retries=0 disables the OpenAI
    # SDK's own retries (2 by default, with ~0.5-1 s backoff each) so error tests stay fast.
    kwargs: dict[str, Any] = {
        "model": "openai/test-model",
        "api_base": server.base_url,
        "api_key": "sk-test",
        "messages": USER,
    }
    return kwargs if sdk_retries else {**kwargs, "max_retries": 0}


def test_litellm_text(litellm: ModuleType, server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("Hi from the local server", reasoning="short thought"))
    response = litellm.completion(**llm_kwargs(server))
    message = response.choices[0].message
    assert message.content == "Hi from the local server"
    assert message.reasoning_content == "short thought"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.total_tokens > 0
    (recorded,) = server.requests
    assert recorded.body["model"] == "test-model"
    assert recorded.body["messages"] == USER
    assert recorded.headers["authorization"] == "<redacted>"


def test_litellm_tool_calls(litellm: ModuleType, server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.tool_calls([("get_weather", {"city": "Paris"}), ("bad", "{oops")]))
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    response = litellm.completion(**llm_kwargs(server), tools=tools)
    assert response.choices[0].finish_reason == "tool_calls"
    calls = response.choices[0].message.tool_calls
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_1", "get_weather", '{"city": "Paris"}'),
        ("call_2", "bad", "{oops"),
    ]
    assert server.requests[0].body["tools"] == tools


def test_litellm_stream_text(litellm: ModuleType, server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("streamed words arrive one by one"))
    stream = litellm.completion(**llm_kwargs(server), stream=True)
    pieces = [chunk.choices[0].delta.content for chunk in stream if chunk.choices]
    text_pieces = [piece for piece in pieces if piece]
    assert len(text_pieces) > 1
    assert "".join(text_pieces) == "streamed words arrive one by one"
    assert server.requests[0].body["stream"] is True


def test_litellm_stream_tool_calls_and_usage(
    litellm: ModuleType, server: OpenAICompatServer
) -> None:
    server.enqueue(
        ServerReply.tool_calls(
            [("search", {"q": "deskwork"})], usage={"prompt_tokens": 7, "completion_tokens": 5}
        )
    )
    kwargs = llm_kwargs(server)
    chunks = list(litellm.completion(**kwargs, stream=True, stream_options={"include_usage": True}))
    rebuilt = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
    (call,) = rebuilt.choices[0].message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "search",
        '{"q": "deskwork"}',
    )
    assert rebuilt.choices[0].finish_reason == "tool_calls"
    assert rebuilt.usage.total_tokens == 12


async def test_litellm_acompletion(litellm: ModuleType) -> None:
    async with OpenAICompatServer(default=ServerReply.text("async answer")) as srv:
        response = await litellm.acompletion(**llm_kwargs(srv))
        assert response.choices[0].message.content == "async answer"


@pytest.mark.parametrize(
    ("reply", "exception_name"),
    [
        (ServerReply.error(429, "Rate limit reached", type="rate_limit_error"), "RateLimitError"),
        (ServerReply.error(500, "boom"), "InternalServerError"),
        (ServerReply.error(503, "overloaded"), "ServiceUnavailableError"),
        (ServerReply.error(401, "Incorrect API key provided"), "AuthenticationError"),
        (ServerReply.context_length_exceeded(), "ContextWindowExceededError"),
    ],
)
def test_litellm_maps_errors(
    litellm: ModuleType, server: OpenAICompatServer, reply: ServerReply, exception_name: str
) -> None:
    server.set_handler(lambda request: reply)
    with pytest.raises(getattr(litellm, exception_name)) as caught:
        litellm.completion(**llm_kwargs(server))
    assert caught.value.status_code == reply.status
    assert len(server.requests) == 1  # max_retries=0: no SDK retry


def test_litellm_num_retries_retries_against_the_server(
    litellm: ModuleType, server: OpenAICompatServer
) -> None:
    # retry-after-ms makes the OpenAI SDK's backoff ~1 ms ("retry-after: 0" is ignored).
    # With num_retries=1 LiteLLM lets the SDK retry once *and* retries once itself: 3 requests
    # for LiteLLM 1.106 (the exact count is LiteLLM's business; we only require more than 1).
    failing = ServerReply.error(429, "slow down", headers={"retry-after-ms": "1"})
    server.set_handler(lambda request: failing)
    with pytest.raises(litellm.RateLimitError):
        litellm.completion(**llm_kwargs(server, sdk_retries=True), num_retries=1)
    assert len(server.requests) > 1
    server.clear()
    server.enqueue(failing)
    server.set_handler(None)
    response = litellm.completion(**llm_kwargs(server, sdk_retries=True), num_retries=1)
    assert response.choices[0].message.content == "ok"
    assert len(server.requests) == 2


def test_litellm_timeout(litellm: ModuleType, server: OpenAICompatServer) -> None:
    server.enqueue(ServerReply.text("late", delay=5.0))
    started = time.perf_counter()
    with pytest.raises(litellm.Timeout):
        litellm.completion(**llm_kwargs(server), timeout=0.2)
    assert time.perf_counter() - started < 4  # not the reply's 5 s


def test_a_response_after_which_the_server_drops_the_connection_says_so(
    server: OpenAICompatServer, client: httpx.Client
) -> None:
    def explode(request: RecordedRequest) -> ServerReply:
        raise ValueError("handler bug")

    server.set_handler(explode)
    response = chat(client)
    server.set_handler(None)
    assert response.status_code == 500
    assert response.headers["connection"] == "close"  # clients must not reuse it
    for _ in range(20):  # each next request gets a fresh connection and an answer
        assert chat(client).status_code == 200
