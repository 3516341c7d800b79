"""LiteLLMAdapter over real HTTP against the local OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import tool

API_KEY = "sk-test-secret-0123456789"


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Total(BaseModel):
    total: int


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> OpenAICompatServer:
    server.clear()
    return server


def make_desk(server: OpenAICompatServer, **kwargs: object) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=API_KEY)
    kwargs.setdefault("run_store", InMemoryRunStore())
    return Desk(model="openai/test-model", adapter=adapter, **kwargs)  # type: ignore[arg-type]


def test_plain_reply_and_llm_events(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply.text(
            "hello there", usage={"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
        )
    )
    report = make_desk(srv).run(Worker(name="w", instructions="Be brief."), Job(input="hi"))
    assert report.status == "completed"
    assert report.content == "hello there"
    body = srv.requests[0].body
    assert body["model"] == "test-model"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "tools" not in body  # tools only sent when present
    done = [e for e in report.events if e.type == EventType.LLM_COMPLETED]
    assert done[0].payload["total_tokens"] == 9
    assert done[0].payload["latency_ms"] > 0
    assert report.metrics["total_tokens"] == 9


def test_several_tool_calls_in_one_turn(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply.tool_calls([("add", {"a": 2, "b": 3}), ("add", {"a": 10, "b": 1})]),
        ServerReply.text("5 and 11"),
    )
    report = make_desk(srv).run(Worker(name="w", tools=[add]), Job(input="add"))
    assert report.status == "completed", report.errors
    assert [c.result.content for c in report.tool_calls if c.result] == ["5", "11"]
    second = srv.requests[1].body["messages"]
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["5", "11"]
    assert srv.requests[0].body["tools"][0]["function"]["name"] == "add"


def test_malformed_tool_arguments_reach_the_model_as_an_error(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.tool_calls([("add", '{"a": 2, "b":')]), ServerReply.text("sorry"))
    report = make_desk(srv).run(Worker(name="w", tools=[add]), Job(input="add"))
    assert report.status == "completed"
    assert report.tool_calls[0].error is not None
    tool_message = next(m for m in srv.requests[1].body["messages"] if m["role"] == "tool")
    assert "malformed tool arguments" in tool_message["content"]


def test_streamed_text_and_tool_arguments(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply.tool_calls([("add", {"a": 20, "b": 22})]),
        ServerReply.text("the answer is forty two"),
    )
    report = make_desk(srv).run(Worker(name="w", tools=[add]), Job(input="add"), stream=True)
    assert report.status == "completed"
    tokens = [e.payload for e in report.events if e.type == EventType.STREAM_TOKEN]
    arg_tokens = [t["token"] for t in tokens if t["type"] == "tool_argument"]
    text_tokens = [t["token"] for t in tokens if t["type"] == "content"]
    assert len(arg_tokens) >= 2 and "".join(arg_tokens) == '{"a": 20, "b": 22}'
    assert len(text_tokens) > 1 and "".join(text_tokens) == "the answer is forty two"
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "42"
    assert srv.requests[0].body["stream"] is True


def test_json_schema_structured_output(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.json({"total": 7}))
    report = make_desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "completed", report.errors
    assert report.data == Total(total=7)
    assert report.content == '{"total":7}'
    fmt = srv.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["total"]["type"] == "integer"


def test_instructor_fallback_after_invalid_json(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("not json at all"), ServerReply.json({"total": 4}))
    report = make_desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "completed", report.errors
    assert report.data == Total(total=4)
    assert len(srv.requests) == 2
    assert "response_format" in srv.requests[0].body


def test_invalid_structured_output_fails_after_retries(srv: OpenAICompatServer) -> None:
    srv.set_handler(lambda _req: ServerReply.text('{"total": "many"}'))
    try:
        report = make_desk(srv, structured_output_retries=0).run(
            Worker(name="w"), Job(input="x", response_schema=Total)
        )
    finally:
        srv.set_handler(None)
    assert report.status == "failed"
    assert "structured output" in report.errors[0]
    assert len(srv.requests) >= 4  # native attempt + at least 3 Instructor retries


@pytest.mark.parametrize("status", [429, 500])
def test_provider_errors_without_retries(srv: OpenAICompatServer, status: int) -> None:
    srv.enqueue(ServerReply.error(status, "provider says no", headers={"retry-after-ms": "1"}))
    report = make_desk(srv).run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "provider says no" in report.errors[0]
    assert len(srv.requests) == 1  # num_retries=0 disables retries
    failed = [e for e in report.events if e.type == EventType.LLM_FAILED]
    assert failed and failed[0].payload["error_type"] in {"RateLimitError", "InternalServerError"}


@pytest.mark.parametrize("status", [429, 500])
def test_num_retries_recovers_from_transient_errors(srv: OpenAICompatServer, status: int) -> None:
    srv.enqueue(
        ServerReply.error(status, "try again", headers={"retry-after-ms": "1"}),
        ServerReply.text("recovered"),
    )
    report = make_desk(srv, num_retries=2).run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == "recovered"
    assert len(srv.requests) == 2


def test_context_length_error_triggers_reactive_compaction(srv: OpenAICompatServer) -> None:
    history = [
        {"role": "user", "content": f"old message {i}"} if i % 2 == 0
        else {"role": "assistant", "content": f"old answer {i}"}
        for i in range(10)
    ]  # fmt: skip
    from deskwork import Message

    job = Job(input="latest question", initial_messages=[Message(**m) for m in history])  # type: ignore[arg-type]
    srv.enqueue(
        ServerReply.context_length_exceeded(),
        ServerReply.text("a short summary of the old talk"),
        ServerReply.text("final answer"),
    )
    report = make_desk(srv).run(Worker(name="w"), job)
    assert report.status == "completed", report.errors
    assert report.content == "final answer"
    summarized = [e for e in report.events if e.type == EventType.WORKER_CONTEXT_SUMMARIZED]
    assert summarized and summarized[0].payload["summarized_messages"] > 0
    retried = srv.requests[2].body["messages"]
    assert len(retried) < len(srv.requests[0].body["messages"])
    assert any("a short summary" in (m["content"] or "") for m in retried)


def test_context_length_error_without_compaction_fails(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.context_length_exceeded())
    desk = make_desk(srv, respect_context_window=False)
    report = desk.run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "context limit" in report.errors[0]


def test_thinking_and_extra_body_pass_through(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("9.8 is larger", reasoning="compare decimals"))
    job = Job(input="which is larger", extra_body={"custom_setting": 42})
    report = make_desk(srv).run(Worker(name="w"), job)
    assert report.reasoning_content == "compare decimals"
    assert srv.requests[0].body["custom_setting"] == 42


def test_api_key_is_sent_but_never_stored(srv: OpenAICompatServer, tmp_path: Path) -> None:
    srv.enqueue(ServerReply.error(500, f"upstream echoed key {API_KEY}"))
    desk = make_desk(srv, run_store=None, storage_dir=tmp_path)
    report = desk.run(Worker(name="w"), Job(input="x", metadata={"api_key": API_KEY}))
    assert report.status == "failed"
    assert srv.requests[0].headers["authorization"] == "<redacted>"  # it was sent
    desk.run_store.flush()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert API_KEY.encode() not in stored
    assert all(API_KEY not in str(e.payload) for e in report.events)
    assert API_KEY not in " ".join(report.errors)
    assert API_KEY not in repr(desk.adapter)


async def test_async_run_with_litellm(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("async ok"))
    desk = make_desk(srv)
    report = await desk.arun(Worker(name="w"), Job(input="hi"))
    assert report.content == "async ok"
    await LiteLLMAdapter.aclose(desk.adapter)  # type: ignore[arg-type]  # release loop-bound tasks


def test_sync_complete_uses_litellm_completion(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("sync ok"))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=API_KEY)
    response = adapter.complete(
        model="openai/test-model", messages=[{"role": "user", "content": "x"}], tools=None,
        tool_choice=None, temperature=None, max_tokens=None, stream=False, stream_options=None,
    )  # fmt: skip
    assert response.content == "sync ok"


def test_cost_is_reported_for_priced_models(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply.text(
            "priced", usage={"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000}
        )
    )
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=API_KEY)
    desk = Desk(model="openai/gpt-4o-mini", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x"))
    done = next(e for e in report.events if e.type == EventType.LLM_COMPLETED)
    assert done.payload["cost"] is not None and done.payload["cost"] > 0
    assert report.metrics["cost"] == pytest.approx(done.payload["cost"])


def test_process_exit_is_clean(srv: OpenAICompatServer, tmp_path: Path) -> None:
    """A script using the sync API exits without LiteLLM's pending-task warnings."""
    import subprocess
    import sys

    srv.set_handler(lambda _req: ServerReply.text("bye"))
    script = tmp_path / "script.py"
    script.write_text(
        "from deskwork import Desk, Job, Worker\n"
        "from deskwork.adapters import LiteLLMAdapter\n"
        "from deskwork.store import InMemoryRunStore\n"
        f"adapter = LiteLLMAdapter(api_base={srv.base_url!r}, api_key='sk-x')\n"
        "desk = Desk(model='openai/test-model', adapter=adapter, run_store=InMemoryRunStore())\n"
        "print(desk.run(Worker(name='w'), Job(input='hi')).content)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
        )
    finally:
        srv.set_handler(None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "bye"
    assert "never awaited" not in done.stderr
    assert "Task was destroyed" not in done.stderr


PLAIN_KEY = "0123456789abcdef0123456789abcdef"  # an Azure-style key: no sk- or Bearer to spot


@pytest.mark.parametrize("source", ["argument", "environment"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_key_echoed_by_the_server_is_hidden_whatever_its_shape(
    srv: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch, source: str, stream: bool
) -> None:
    echo = ServerReply.error(400, f"invalid key {PLAIN_KEY} for this organization")
    srv.enqueue(echo, echo)  # a failed stream is followed by one plain call
    if source == "environment":
        monkeypatch.setenv("OPENAI_API_KEY", PLAIN_KEY)
    key = PLAIN_KEY if source == "argument" else None
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=key)
    store = InMemoryRunStore()
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=store, stream=stream)
    report = desk.run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "invalid key <redacted> for this organization" in report.errors[0]
    assert PLAIN_KEY not in report.model_dump_json()
    assert all(PLAIN_KEY not in str(e.payload) for e in report.events)
    assert PLAIN_KEY not in repr(store.get_events(report.run_id))


def test_a_first_call_without_tools_keeps_litellm_offline(
    srv: OpenAICompatServer, tmp_path: Path
) -> None:
    """LiteLLM is loaded with its bundled price list, never fetching one from the network,
    whatever the first call (here: no tools, streamed or not, sync or async)."""
    import os
    import subprocess
    import sys

    srv.set_handler(lambda _req: ServerReply.text("hi"))
    script = tmp_path / "script.py"
    script.write_text(
        "import asyncio\n"
        "from deskwork import Desk, Job, Worker\n"
        "from deskwork.adapters import LiteLLMAdapter\n"
        "from deskwork.store import InMemoryRunStore\n"
        f"adapter = LiteLLMAdapter(api_base={srv.base_url!r}, api_key='sk-x')\n"
        "desk = Desk(model='openai/test-model', adapter=adapter, run_store=InMemoryRunStore())\n"
        "print(asyncio.run(desk.arun(Worker(name='w'), Job(input='hi'))).content)\n"
        "from litellm.litellm_core_utils.get_model_cost_map import"
        " get_model_cost_map_source_info\n"
        "print(get_model_cost_map_source_info()['is_env_forced'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )  # fmt: skip
    finally:
        srv.set_handler(None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hi", "True"]
    assert "cost map fetch" not in done.stderr


NO_CHOICE = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}


@pytest.mark.parametrize("stream", [False, True])
def test_a_200_without_a_choice_fails_the_run(srv: OpenAICompatServer, stream: bool) -> None:
    """Not an empty answer: a reply with no choice is a provider error (streamed, it is asked
    again without a stream first, as for any server that sent no stream)."""
    srv.enqueue(ServerReply.malformed(NO_CHOICE), ServerReply.malformed(NO_CHOICE))
    report = make_desk(srv, stream=stream).run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "ProviderReplyError" in report.errors[0]
    failed = [e for e in report.events if e.type == EventType.LLM_FAILED]
    assert failed and failed[-1].payload["error_type"] == "ProviderReplyError"


def test_a_reply_without_a_choice_is_retried_under_num_retries(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.malformed(NO_CHOICE), ServerReply.text("recovered"))
    report = make_desk(srv, num_retries=1).run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == "recovered"
    assert len(srv.requests) == 2


def test_a_stream_cut_midway_fails_instead_of_completing_truncated(
    srv: OpenAICompatServer,
) -> None:
    srv.enqueue(ServerReply(content="the whole answer has many words in it", stream_cut=3))
    report = make_desk(srv, stream=True).run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert "finish" in report.errors[0] and "ProviderReplyError" in report.errors[0]
    tokens = [e.payload["token"] for e in report.events if e.type == EventType.STREAM_TOKEN]
    assert "".join(tokens).startswith("the whole")  # what came is recorded


def test_a_refusal_is_the_answer_not_lost(srv: OpenAICompatServer) -> None:
    """OpenAI sends a refusal as ``message.refusal`` with no content: the run ended with no
    answer and no trace of why (streamed: tests/adapters/test_streamed_refusal.py)."""
    srv.enqueue(ServerReply.refused("I can't help with that request."))
    report = make_desk(srv).run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == "I can't help with that request."


def test_structured_output_honours_num_retries_on_transient_errors(
    srv: OpenAICompatServer,
) -> None:
    """A 5xx of a structured call was retried once by the fallback pipeline and then failed
    as a StructuredOutputError: num_retries=0 made two requests, num_retries=2 no retry."""
    busy = ServerReply.error(503, "overloaded", headers={"retry-after-ms": "1"})
    srv.enqueue(busy, ServerReply.json({"total": 4}))
    failed = make_desk(srv).run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert failed.status == "failed"
    assert "ServiceUnavailableError" in failed.errors[0]
    assert len(srv.requests) == 1
    srv.clear()
    srv.enqueue(busy, busy, ServerReply.json({"total": 4}))
    report = make_desk(srv, num_retries=2).run(
        Worker(name="w"), Job(input="x", response_schema=Total)
    )
    assert report.status == "completed", report.errors
    assert report.data == Total(total=4)
    assert len(srv.requests) == 3
    assert all("response_format" in r.body for r in srv.requests)  # each try is the native one


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_stream_refused_for_its_key_or_model_is_not_sent_again(
    srv: OpenAICompatServer, status: int
) -> None:
    """A plain call is refused the same way: the fallback doubled every refused request."""
    srv.enqueue(ServerReply.error(status, "refused"), ServerReply.error(status, "refused"))
    report = make_desk(srv, stream=True).run(Worker(name="w"), Job(input="x"))
    assert report.status == "failed"
    assert len(srv.requests) == 1
    assert "llm.stream_fallback" not in [e.type for e in report.events]


async def test_an_echoed_key_is_nowhere_in_the_error_a_durable_desk_pickles(
    srv: OpenAICompatServer,
) -> None:
    """The message was masked, but the error's ``body`` (the server's answer) kept the key."""
    import pickle

    srv.enqueue(ServerReply.error(500, f"upstream refused {PLAIN_KEY}"))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=PLAIN_KEY)
    with pytest.raises(Exception) as raised:
        await adapter.acomplete(
            model="openai/test-model", messages=[{"role": "user", "content": "x"}], tools=None,
            tool_choice=None, temperature=None, max_tokens=None, stream=False,
            stream_options=None,
        )  # fmt: skip
    await adapter.aclose()
    assert getattr(raised.value, "status_code", None) == 500  # still a retriable 500
    assert PLAIN_KEY.encode() not in pickle.dumps(raised.value)


def test_a_gateway_key_sent_as_an_extra_header_is_hidden_too(srv: OpenAICompatServer) -> None:
    """AI gateways take their own key in a header (extra_params={"extra_headers": ...})."""
    srv.enqueue(ServerReply.error(400, f"gateway refused key {PLAIN_KEY}"))
    headers = {"X-Gateway-Key": PLAIN_KEY, "cf-aig-authorization": f"Bearer {PLAIN_KEY}x"}
    adapter = LiteLLMAdapter(
        api_base=srv.base_url, api_key=API_KEY, extra_params={"extra_headers": headers}
    )
    report = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore()).run(
        Worker(name="w"), Job(input="x")
    )
    assert report.status == "failed"
    assert "gateway refused key <redacted>" in report.errors[0]
    assert PLAIN_KEY not in report.model_dump_json()


async def test_litellm_mock_responses_stream_too() -> None:
    """LiteLLM's mock_response streams send no finish reason of their own: not a cut stream."""
    adapter = LiteLLMAdapter(api_key="sk-test-0123456789", extra_params={"mock_response": "hi"})
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    for stream in (False, True):
        report = await desk.arun(Worker(name="w"), Job(input="x"), stream=stream)
        assert (report.status, report.content) == ("completed", "hi"), report.errors
    await adapter.aclose()  # release loop-bound tasks


def test_a_server_that_answers_a_stream_with_plain_json_is_asked_again_without_one(
    srv: OpenAICompatServer,
) -> None:
    """Some OpenAI-compatible servers ignore stream=true: the answer was lost (the run
    completed empty, then failed as a cut stream); a plain call now gets it."""
    body = {
        "id": "x", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "a plain answer"}}],
    }  # fmt: skip
    srv.enqueue(ServerReply.malformed(body), ServerReply.malformed(body))
    report = make_desk(srv, stream=True).run(Worker(name="w"), Job(input="x"))
    assert report.status == "completed", report.errors
    assert report.content == "a plain answer"
    assert [r.body.get("stream") for r in srv.requests] == [True, None]
    fallback = [e for e in report.events if e.type == "llm.stream_fallback"]
    assert fallback and fallback[0].payload["error_type"] == "StreamingUnsupportedError"
