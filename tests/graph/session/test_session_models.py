"""Session data models: validation, immutability, LangChain conversion, expiry, matching."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary


def test_message_defaults_an_id_and_a_utc_timestamp() -> None:
    message = SessionMessage(role="user", content="Hello", session_id="s1", user_id="alice")
    uuid.UUID(message.id)
    assert message.timestamp.tzinfo is UTC
    assert message.metadata == {}
    other = SessionMessage(role="user", content="Hello", session_id="s1")
    assert other.id != message.id


def test_a_naive_timestamp_is_taken_as_utc() -> None:
    message = SessionMessage(
        role="user", content="x", session_id="s1", timestamp=datetime(2026, 1, 1, 12, 0)
    )
    assert message.timestamp == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "model",
    [
        lambda: SessionMessage(role="user", content="x", session_id="s1"),
        lambda: Summary(session_id="s1", content="x"),
        lambda: Memory(session_id="s1", key="k", value="v"),
    ],
)
def test_models_are_frozen_and_reject_unknown_fields(model: object) -> None:
    instance = model()  # type: ignore[operator]
    with pytest.raises(ValidationError):
        instance.content = "changed"
    with pytest.raises(ValidationError, match="Extra inputs"):
        type(instance)(**instance.model_dump(), surprise=1)


def test_message_roles_are_validated() -> None:
    with pytest.raises(ValidationError):
        SessionMessage(role="robot", content="x", session_id="s1")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SessionMessage(role="user", content="x", session_id="")


@pytest.mark.parametrize(
    ("role", "kind"),
    [
        ("user", HumanMessage),
        ("assistant", AIMessage),
        ("ai", AIMessage),
        ("system", SystemMessage),
    ],
)
def test_to_langchain_maps_roles(role: str, kind: type) -> None:
    message = SessionMessage(role=role, content="text", session_id="s1")  # type: ignore[arg-type]
    converted = message.to_langchain()
    assert type(converted) is kind
    assert converted.content == "text" and converted.id == message.id


def test_to_langchain_rejects_an_unknown_role() -> None:
    broken = SessionMessage.model_construct(role="robot", content="x", session_id="s1", id="1")
    with pytest.raises(ValueError, match="unknown session message role"):
        broken.to_langchain()


@pytest.mark.parametrize("importance", [-0.1, 1.1])
def test_memory_importance_is_between_zero_and_one(importance: float) -> None:
    with pytest.raises(ValidationError):
        Memory(session_id="s1", key="k", value="v", importance=importance)
    assert Memory(session_id="s1", key="k", value="v").importance == 0.5


def test_memory_expiry() -> None:
    now = datetime.now(UTC)
    assert not Memory(session_id="s1", key="k", value="v").is_expired()
    past = Memory(session_id="s1", key="k", value="v", expires_at=now - timedelta(seconds=1))
    future = Memory(session_id="s1", key="k", value="v", expires_at=now + timedelta(hours=1))
    assert past.is_expired() and not future.is_expired()
    assert future.is_expired(now + timedelta(hours=2))


def test_memory_matching_covers_key_value_and_categories_case_insensitively() -> None:
    memory = Memory(
        session_id="s1", key="Preference", value="Dark mode", categories=["UI", "settings"]
    )
    assert memory.matches("preference") and memory.matches("DARK") and memory.matches("setti")
    assert memory.matches("")
    assert not memory.matches("billing")


def test_paginated_result_is_generic_and_frozen() -> None:
    summary = Summary(session_id="s1", content="short")
    result = PaginatedResult[Summary](items=[summary], next_cursor="1", has_more=True)
    assert result.items == [summary]
    with pytest.raises(ValidationError):
        result.has_more = False
    with pytest.raises(ValidationError):
        PaginatedResult[Summary](items=["not a summary"])  # type: ignore[list-item]
