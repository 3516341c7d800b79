"""A credential header's value is redacted by the header's name, whatever its shape.

``{"X-Api-Key": "abc123"}`` or ``Authorization: Token abc`` has no key word in the value
and no ``sk-``/``Bearer`` shape: such values reached events, reports and logs as they were
when headers were recorded or an error echoed them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deskwork import Desk, EventType, Job, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.core.event import new_event
from deskwork.core.redact import (
    REDACTED,
    describe_exception,
    exception_text,
    hide_header_lines,
    hide_values,
    redact,
    redact_log_text,
    rewrite_exception,
    secret_header,
    traceback_text,
)
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ScriptedAdapter, ServerReply, call_tool, reply
from deskwork.tools import tool

HEADERS = {
    "X-Api-Key": "abc123",
    "Authorization": "Token abc",
    "Proxy-Authorization": "Basic Zm9v",
    "Cookie": "session=s3ss",
    "Set-Cookie": "id=42",
    "X-Gateway-Key": "gw9",
    "Private-Token": "pt7",
    "Accept": "application/json",
    "x-ratelimit-remaining-tokens": "99",
}
HIDDEN = {name for name in HEADERS if name not in {"Accept", "x-ratelimit-remaining-tokens"}}


def test_recorded_headers_keep_no_credential() -> None:
    event = new_event("r1", "tool.completed", "w", {"request": {"headers": HEADERS}})
    kept = event.payload["request"]["headers"]
    assert {name for name, value in kept.items() if value == REDACTED} == HIDDEN
    assert kept["Accept"] == "application/json"
    assert kept["x-ratelimit-remaining-tokens"] == "99"  # a diagnostic, not a credential


def test_headers_as_pairs_and_an_adapters_config() -> None:
    pairs = [("Cookie", "session=s3ss"), ("Accept", "text/plain")]
    config = {"extra_params": {"extra_headers": {"X-Api-Key": "abc123"}}, "headers": pairs}
    assert redact(config) == {
        "extra_params": {"extra_headers": {"X-Api-Key": REDACTED}},
        "headers": [("Cookie", REDACTED), ("Accept", "text/plain")],
    }


def test_keys_outside_headers_keep_their_values() -> None:
    """Only headers are redacted by the broad names: usage counts and a tool's "key"
    argument stay."""
    payload = {"total_tokens": 9, "key": "user:1", "monkey": "x", "args": {"sort_key": "a"}}
    assert redact(payload) == payload


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Token abc",
        "Proxy-Authorization: Basic Zm9v",
        "Cookie: session=s3ss; theme=dark",
        "Set-Cookie: id=42",
        "X-Gateway-Key: gw9",
        "x-api-key: abc123",
    ],
)
def test_an_error_that_echoes_a_header_line_tells_no_credential(line: str) -> None:
    name, value = line.split(": ", 1)
    text = describe_exception(RuntimeError(f"400 bad request\n{line}\nAccept: text/plain"))
    assert value not in text
    assert f"{name}: {REDACTED}" in text and "Accept: text/plain" in text


def test_secret_header_names() -> None:
    assert all(secret_header(name) for name in HIDDEN)
    assert secret_header(b"authorization")
    assert not secret_header("Content-Type") and not secret_header(None)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


def test_a_provider_error_echoing_the_headers_is_stored_without_them(
    server: OpenAICompatServer,
) -> None:
    server.enqueue(ServerReply.error(400, "rejected: X-Gateway-Key: gw9xyz\nCookie: s=abc"))
    adapter = LiteLLMAdapter(
        api_base=server.base_url,
        api_key="sk-test-0123456789",
        extra_params={"extra_headers": {"X-Gateway-Key": "gw9xyz", "Cookie": "s=abc"}},
    )
    store = InMemoryRunStore()
    report = Desk(model="openai/test-model", adapter=adapter, run_store=store).run(
        Worker(name="w"), Job(input="x")
    )
    assert report.status == "failed"
    assert "gw9xyz" not in report.errors[0] and "s=abc" not in report.errors[0]
    failed = [e for e in store.get_events(report.run_id) if e.type == EventType.LLM_FAILED]
    assert failed and "gw9xyz" not in failed[0].payload["error_message"]
    assert "s=abc" not in repr(store.get_events(report.run_id))


async def test_the_error_an_adapter_raises_keeps_no_header_it_echoed(
    server: OpenAICompatServer,
) -> None:
    """What a durable desk pickles, or an application logs, of the provider's error."""
    import pickle

    server.enqueue(ServerReply.error(500, "upstream said: Cookie: s=abc\nX-Gateway-Key: gw9"))
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")
    with pytest.raises(Exception) as raised:
        await adapter.acomplete(
            model="openai/test-model", messages=[{"role": "user", "content": "x"}], tools=None,
            tool_choice=None, temperature=None, max_tokens=None, stream=False,
            stream_options=None,
        )  # fmt: skip
    await adapter.aclose()
    assert getattr(raised.value, "status_code", None) == 500  # still a retriable 500
    kept = pickle.dumps(raised.value)
    assert b"s=abc" not in kept and b"gw9" not in kept
    assert "Cookie: <redacted>" in str(raised.value)


def test_a_log_line_keeps_no_header_it_quotes(caplog: pytest.LogCaptureFixture) -> None:
    from deskwork._logs import get_stdlib_logger

    logger = get_stdlib_logger("deskwork.test_redact_headers")
    with caplog.at_level("WARNING", logger=logger.name):
        logger.warning("request sent with %s", "Cookie: s=abc; t=1")
    assert caplog.messages == ["request sent with Cookie: <redacted>"]


# Plain error text that merely looks like a header line: what a model needs to fix its call.
NOT_HEADERS = [
    "partition-key: tenant_42 not found",
    "index sort-key: created_at missing",
    "token-count: 1532 over limit",
    "the table's primary-key: user_id (see https://docs.example.com)",
    "auth-method: oauth2 via https://x.io",
    "cache-key: user:42 expired",
    "x-ratelimit-remaining-tokens: 99",
    "invalid page-token: abc given",
]
# a credential header as an error or a log quotes it, and the value that must not stay
HEADER_LINES = [
    ("Cookie: session=abc123def", "abc123def"),
    ("Set-Cookie: sid=abc9; Path=/", "abc9"),
    ("X-Gateway-Token: gt123", "gt123"),
    ("Private-Token: pt456", "pt456"),
    ("Authorization: Token abc789", "abc789"),
    ("X-Api-Key: xk321", "xk321"),
    ("rejected: X-Gateway-Key: gw9", "gw9"),
    ("""{"Cookie": "sid=c00k", "Accept": "text/plain"}""", "c00k"),
    ("headers={'x-goog-api-key': 'gk55'}", "gk55"),
    ('Authorization: Digest username="bob", response="d1g3st"', "d1g3st"),
]


def _traceback_of(message: str) -> str:
    try:
        raise RuntimeError(message)
    except RuntimeError as exc:
        return traceback_text(exc)


@pytest.mark.parametrize("text", NOT_HEADERS)
def test_error_text_that_only_looks_like_a_header_stays_whole(text: str) -> None:
    assert exception_text(ValueError(text)) == text
    assert redact_log_text(text) == text
    assert _traceback_of(text).rstrip().endswith(f"RuntimeError: {text}")
    event = new_event("r1", "tool.failed", "w", {"error": describe_exception(ValueError(text))})
    assert event.payload["error"] == f"ValueError: {text}"


@pytest.mark.parametrize(("text", "value"), HEADER_LINES)
def test_a_quoted_credential_header_is_redacted_in_errors_logs_and_tracebacks(
    text: str, value: str
) -> None:
    for kept in (exception_text(ValueError(text)), redact_log_text(text), _traceback_of(text)):
        assert value not in kept and REDACTED in kept


def test_an_auth_scheme_is_one_of_the_known_ones_not_any_word() -> None:
    assert redact_log_text("Authorization: denied for bob") == (
        f"Authorization: {REDACTED} for bob"
    )
    assert redact_log_text("Proxy-Authorization: Basic Zm9v now") == (
        f"Proxy-Authorization: {REDACTED} now"
    )


def test_a_tool_error_that_looks_like_a_header_reaches_the_model_whole() -> None:
    @tool(name="lookup")
    def lookup() -> str:
        raise KeyError("partition-key: tenant_42 not found")

    adapter = ScriptedAdapter([call_tool("lookup"), reply("done")])
    store = InMemoryRunStore()
    desk = Desk(model="scripted/m", adapter=adapter, run_store=store)
    report = desk.run(Worker(name="w", tools=[lookup]), Job(input="go"))
    assert report.status == "completed", report.errors
    assert "partition-key: tenant_42 not found" in adapter.calls[1]["messages"][-1]["content"]
    failed = [e for e in store.get_events(report.run_id) if e.type == EventType.TOOL_FAILED]
    assert "partition-key: tenant_42 not found" in str(failed[0].payload)


def test_an_error_with_nothing_to_hide_is_left_untouched() -> None:
    """The adapter rewrites every error it raises: one with no credential keeps its very
    attributes (what an application compares, or holds on to)."""
    body = {"error": {"message": "model not found", "headers": {"Accept": "text/plain"}}}
    exc = RuntimeError("404 model not found")
    exc.body = body  # type: ignore[attr-defined]
    args = exc.args
    rewrite_exception(exc, lambda value: hide_values(hide_header_lines(value), ["sk-0123456789"]))
    assert exc.body is body and exc.args is args  # type: ignore[attr-defined]
    exc.body = {"error": "echoed Cookie: s=abc"}  # type: ignore[attr-defined]
    rewrite_exception(exc, hide_header_lines)
    assert exc.body == {"error": f"echoed Cookie: {REDACTED}"}  # type: ignore[attr-defined]


def test_a_nested_value_under_a_key_that_is_not_text() -> None:
    assert redact({1: {"headers": {"Cookie": "s=1"}}, "x": [1]}) == {
        1: {"headers": {"Cookie": REDACTED}},
        "x": [1],
    }
