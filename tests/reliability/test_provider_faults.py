"""Provider faults over real HTTP (LiteLLM against the local OpenAI-compatible server).

429s, 500s, timeouts and malformed tool-call JSON from the provider end every run in a
defined status, retries are counted exactly, and no key reaches the store.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.adapters import LiteLLMAdapter, RetryPolicy
from deskwork.store import SQLiteRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import tool

pytestmark = pytest.mark.reliability

API_KEY = "sk-reliability-0123456789abcdef"
FAST = RetryPolicy(initial_interval=0.01, jitter=False)
SLOW = 1.2  # seconds the server stalls on a "timeout" reply
TIMEOUT = 0.3  # the adapter's request timeout


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> Iterator[OpenAICompatServer]:
    server.clear()
    yield server
    server.set_handler(None)


def _desk(srv: OpenAICompatServer, tmp_path: Path, **kwargs: Any) -> Desk:
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=API_KEY, timeout=TIMEOUT)
    return Desk(
        model="openai/test-model",
        adapter=adapter,
        run_store=SQLiteRunStore(tmp_path / "runs.db"),
        storage_dir=tmp_path / ".deskwork",
        retry_policy=FAST,
        **kwargs,
    )


def _fault(kind: str) -> ServerReply:
    if kind == "429":
        return ServerReply.error(429, "slow down", type="rate_limit_error")
    if kind == "500":
        return ServerReply.error(500, f"upstream broke (key {API_KEY})")
    if kind == "timeout":
        return ServerReply.text("too late", delay=SLOW)
    return ServerReply.text("fine")


def test_429_500_and_a_timeout_are_retried_then_the_run_completes(
    srv: OpenAICompatServer, tmp_path: Path
) -> None:
    srv.enqueue(_fault("429"), _fault("500"), _fault("timeout"), _fault("ok"))
    report = _desk(srv, tmp_path, num_retries=3).run(Worker(name="w"), "hi")
    assert (report.status, report.content) == ("completed", "fine")
    assert len(srv.requests) == 4
    assert [e.payload["retry"] for e in report.events if e.type == "llm.retry"] == [1, 2, 3]


def test_a_fault_storm_ends_every_run_in_a_defined_status(
    srv: OpenAICompatServer, tmp_path: Path
) -> None:
    """Twelve runs against a provider that fails 7 requests in 9, in a fixed cycle."""
    cycle = itertools.cycle(["429", "500", "ok", "429", "timeout", "ok", "500", "500", "500"])
    srv.set_handler(lambda request: _fault(next(cycle)))
    desk = _desk(srv, tmp_path, num_retries=2)
    reports = [desk.run(Worker(name="w"), f"job {n}") for n in range(12)]
    statuses = [r.status for r in reports]
    assert set(statuses) <= {"completed", "failed"}
    assert "completed" in statuses and "failed" in statuses  # the 3x500 stretch exhausts retries
    for report in reports:
        record = desk.run_store.get_run(report.run_id)
        assert record is not None and record.status == report.status
        assert (report.content == "fine") == (report.status == "completed")
        if report.status == "failed":
            assert report.errors and report.events[-1].type == "run.failed"
    calls = len(srv.requests)
    retries = sum(1 for r in reports for e in r.events if e.type == "llm.retry")
    assert calls == len(reports) + retries  # every request is a first try or a counted retry
    assert API_KEY.encode() not in (tmp_path / "runs.db").read_bytes()


def test_a_timeout_without_retries_fails_the_run_quickly(
    srv: OpenAICompatServer, tmp_path: Path
) -> None:
    srv.enqueue(_fault("timeout"))
    started = time.perf_counter()
    report = _desk(srv, tmp_path).run(Worker(name="w"), "hi")
    assert time.perf_counter() - started < SLOW + 3
    assert report.status == "failed"
    assert "timeout" in " ".join(report.errors).lower()


def test_malformed_tool_call_json_from_the_provider_is_answered_with_an_error(
    srv: OpenAICompatServer, tmp_path: Path
) -> None:
    ran: list[int] = []

    @tool()
    def double(x: int) -> int:
        """Double a number."""
        ran.append(x)
        return 2 * x

    srv.enqueue(
        ServerReply.tool_calls([("double", '{"x": 2'), ("double", {"x": 4})]),
        ServerReply.text("one worked"),
    )
    report = _desk(srv, tmp_path).run(Worker(name="w", tools=[double]), "double 2 and 4")
    assert (report.status, report.content) == ("completed", "one worked")
    assert ran == [4]
    tool_messages = [m for m in srv.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"].startswith("Error:")
    assert "malformed" in tool_messages[0]["content"]
    assert tool_messages[1]["content"] == "8"
