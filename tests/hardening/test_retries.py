"""One retry policy, owned by the desk, for every adapter: exact counts, backoff, Retry-After."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.adapters import LiteLLMAdapter, RetryPolicy
from deskwork.adapters._retry import retry_after_seconds
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ScriptedAdapter, ServerReply, fail, reply

FAST = RetryPolicy(initial_interval=0.01, jitter=False)


class RateLimited(Exception):
    """A custom adapter's rate-limit error, the way HTTP clients describe one."""

    status_code = 429

    def __init__(self, retry_after: float | None = None) -> None:
        super().__init__("slow down")
        if retry_after is not None:
            self.retry_after = retry_after


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> Iterator[OpenAICompatServer]:
    server.clear()
    yield server
    server.set_handler(None)


def _http_desk(server: OpenAICompatServer, **kwargs: Any) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")
    return Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


def _retries(report: Any) -> list[dict[str, Any]]:
    return [e.payload for e in report.events if e.type == "llm.retry"]


def test_litellm_num_retries_2_makes_exactly_3_requests(srv: OpenAICompatServer) -> None:
    limited = ServerReply.error(429, "slow down", type="rate_limit_error")
    srv.set_handler(lambda request: limited)
    report = _http_desk(srv, num_retries=2, retry_policy=FAST).run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert "RateLimitError" in report.errors[0]
    assert len(srv.requests) == 3  # not 5: LiteLLM and the SDK do not retry on top
    assert [r["retry"] for r in _retries(report)] == [1, 2]


def test_litellm_without_retries_makes_one_request(srv: OpenAICompatServer) -> None:
    srv.set_handler(lambda request: ServerReply.error(503, "overloaded"))
    report = _http_desk(srv).run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert len(srv.requests) == 1


def test_retry_after_from_the_provider_is_honoured(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.error(429, "wait", headers={"retry-after": "0.3"}))
    srv.enqueue(ServerReply.text("finally"))
    started = time.perf_counter()
    report = _http_desk(srv, num_retries=1, retry_policy=FAST).run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "finally")
    assert time.perf_counter() - started >= 0.3
    assert len(srv.requests) == 2
    assert _retries(report)[0]["wait_seconds"] == pytest.approx(0.3)


def test_streaming_calls_are_retried_before_their_first_chunk(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.error(429, "wait", headers={"retry-after-ms": "1"}))
    srv.enqueue(ServerReply.text("streamed fine"))
    desk = _http_desk(srv, num_retries=1, retry_policy=FAST, stream=True)
    report = desk.run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "streamed fine")
    assert len(srv.requests) == 2


def test_a_custom_adapter_is_retried_by_the_desk() -> None:
    adapter = ScriptedAdapter([fail(RateLimited()), fail(RateLimited()), reply("ok")])
    desk = Desk(
        model="custom/m",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        num_retries=2,
        retry_policy=RetryPolicy(initial_interval=0.02, backoff_factor=2, jitter=False),
    )
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert (report.status, report.content) == ("completed", "ok")
    assert len(adapter.calls) == 3
    waits = [r["wait_seconds"] for r in _retries(report)]
    assert waits == [0.02, 0.04]  # exponential backoff
    assert report.metrics["llm_calls"] == 1  # one call, retried inside


def test_a_permanent_error_is_not_retried() -> None:
    adapter = ScriptedAdapter([fail(ValueError("bad request")), reply("never")])
    desk = Desk(model="c/m", adapter=adapter, run_store=InMemoryRunStore(), num_retries=3)
    report = desk.run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert len(adapter.calls) == 1


def test_a_retry_after_beyond_the_policys_limit_is_not_waited_for() -> None:
    adapter = ScriptedAdapter([fail(RateLimited(retry_after=3600)), reply("never")])
    policy = RetryPolicy(max_retry_after=5)
    desk = Desk(
        model="c/m", adapter=adapter, run_store=InMemoryRunStore(), num_retries=3,
        retry_policy=policy,
    )  # fmt: skip
    started = time.perf_counter()
    report = desk.run(Worker(name="w"), "hi")
    assert report.status == "failed"
    assert time.perf_counter() - started < 1
    assert len(adapter.calls) == 1


def test_jitter_keeps_waits_within_the_backoff() -> None:
    policy = RetryPolicy(initial_interval=1.0, backoff_factor=2.0, max_interval=3.0)
    waits = [policy.backoff(2) for _ in range(200)]
    assert all(0 <= w <= 3.0 for w in waits)  # capped at max_interval
    assert len({round(w, 6) for w in waits}) > 100  # and spread out


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_parsing(headers: dict[str, str], expected: float | None) -> None:
    class WithHeaders(Exception):
        pass

    error = WithHeaders()
    error.headers = headers  # type: ignore[attr-defined]
    assert retry_after_seconds(error) == expected


def test_retry_after_as_an_http_date() -> None:
    from email.utils import formatdate

    class WithHeaders(Exception):
        pass

    error = WithHeaders()
    error.headers = {"retry-after": formatdate(time.time() + 30, usegmt=True)}  # type: ignore[attr-defined]
    seconds = retry_after_seconds(error)
    assert seconds is not None and 25 <= seconds <= 31
