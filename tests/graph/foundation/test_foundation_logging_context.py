"""deskwork.graph.core.logging_context: bound correlation fields, PII hashing, secret redaction."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
import structlog
from structlog.contextvars import bind_contextvars, clear_contextvars, get_contextvars
from structlog.testing import capture_logs

from deskwork.graph.core.logging_context import (
    bind_logging_context,
    clear_logging_context,
    get_graph_logger,
    redact_pii,
    redact_secrets,
)
from deskwork.graph.testing import make_test_state


@pytest.fixture(autouse=True)
def _clean_contextvars() -> Iterator[None]:
    clear_contextvars()
    yield
    clear_contextvars()


def test_binds_state_ids_and_langgraph_metadata() -> None:
    state = make_test_state("hi", session_id="s1", user_id="alice", request_id="r1")
    config = {"metadata": {"langgraph_step": 3, "langgraph_node": "greeter"}}
    bind_logging_context(state, config)
    assert get_contextvars() == {
        "request_id": "r1",
        "session_id": "s1",
        "user_id": "alice",
        "langgraph_step": 3,
        "langgraph_node": "greeter",
    }


def test_fields_reach_log_events_through_merge_contextvars() -> None:
    bind_logging_context(make_test_state("hi", request_id="r9"))
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        structlog.get_logger().info("agent_invoke_start", agent_name="a")
    assert logs[0]["request_id"] == "r9"
    assert logs[0]["session_id"] == "test-session"


def test_redact_pii_hashes_identities_but_not_the_request_id() -> None:
    state = make_test_state("hi", session_id="s1", user_id="alice", request_id="r1")
    bind_logging_context(state, None, redact_pii=True)
    bound = get_contextvars()
    assert bound["user_id"] == hashlib.sha256(b"alice").hexdigest()[:12]
    assert bound["session_id"] == redact_pii("s1")
    assert len(bound["session_id"]) == 12
    assert bound["request_id"] == "r1"
    assert "alice" not in str(bound)


def test_redact_pii_is_deterministic() -> None:
    assert redact_pii("alice") == redact_pii("alice") != redact_pii("bob")


def test_absent_fields_are_unbound_not_left_stale() -> None:
    bind_logging_context(
        make_test_state("a", request_id="old"), {"metadata": {"langgraph_step": 1}}
    )
    bind_logging_context({"request_id": "new"})
    assert get_contextvars() == {"request_id": "new"}


def test_clear_removes_only_the_graph_fields() -> None:
    bind_contextvars(app_field="kept")
    bind_logging_context(make_test_state("a"), {"metadata": {"langgraph_node": "n"}})
    clear_logging_context()
    assert get_contextvars() == {"app_field": "kept"}


def test_redact_secrets_processor() -> None:
    event = {"event": "llm_failed", "exc_msg": "Bearer abcdefghijkl rejected", "api_key": "x"}
    out = redact_secrets(None, "error", event)
    assert "abcdefghijkl" not in out["exc_msg"]
    assert out["api_key"] != "x"
    assert out["event"] == "llm_failed"


def test_graph_logger_redacts_fields_at_every_level() -> None:
    log = get_graph_logger("deskwork.graph.test")
    with capture_logs() as logs:
        log.debug("d", exc_msg="api_key=abcdef123456")
        log.info("i", authorization="Bearer abcdefghijklmnop")
        log.warning("w", nested={"password": "hunter2"})
        log.error("e", exc_msg="token sk-abcdefghijklmnop rejected", agent_name="a")
        try:
            raise ValueError("x")
        except ValueError:
            log.exception("x", detail="password=hunter2")
    assert [e["event"] for e in logs] == ["d", "i", "w", "e", "x"]
    text = str(logs)
    for secret in ("abcdef123456", "abcdefghijklmnop", "hunter2"):
        assert secret not in text
    assert logs[3]["agent_name"] == "a"
    assert logs[4]["log_level"] == "error"
