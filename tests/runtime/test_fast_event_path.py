"""The run path's fast event construction and storage (issue 13) give what the slow path gave:
the same redacted payloads, the same events, and the same events read back from the store."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from deskwork import Event
from deskwork.core.event import new_event
from deskwork.core.redact import REDACTED, redact, redact_text
from deskwork.store import InMemoryRunStore
from deskwork.utils import utc_now


class Color(StrEnum):
    RED = "red"


@dataclass
class Point:
    x: int
    y: int


PAYLOADS: list[dict[Any, Any]] = [
    {},
    {"model": "scripted/m", "messages_count": 3, "tools_count": 2, "cost": None},
    {"latency_ms": 0.125, "ok": True, "big": 2**70, "neg": -1, "zero": 0.0},
    {"password": "hunter2", "api_key": 1, "note": "use Bearer abcdefgh12345 now"},
    {"nested": {"authorization": "x", "list": [1, ("a", "sk-abcdefghijklmnop")]}},
    {"tuple": (1, 2), "text": "caf\u00e9 \u2603 \U0001f600", "quote": 'a "b" \\ c\n\t'},
    {"url": "postgresql://app:s3cr3t@db/runs", "plain": "http://example.com/x"},
    {"when": datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), "span": timedelta(seconds=3)},
    {"color": Color.RED, Color.RED: "enum key", "point": Point(1, 2)},
    {"nan": math.nan, "inf": math.inf, "bytes": b"raw"},
    {"SK-ABCDEFGHIJK": "upper", "text": 'say "password": "x" and SK-ABCDEFGHIJKL'},
]


def _validated(payload: dict[Any, Any]) -> Event:
    return Event(
        event_id="e1",
        type="custom",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        run_id="r1",
        source="src",
        payload=redact(payload) if payload else {},
    )


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_new_event_equals_a_validated_event_of_the_redacted_payload(
    payload: dict[Any, Any],
) -> None:
    event = new_event("r1", "custom", "src", payload)
    expected = _validated(payload)
    same_ids = event.model_copy(update={"event_id": "e1", "timestamp": expected.timestamp})
    assert same_ids == expected
    assert type(event.payload) is dict and event.payload is not payload
    assert event.payload == (redact(payload) if payload else {})


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_memory_store_gives_back_what_the_event_serializes_to(
    payload: dict[Any, Any],
) -> None:
    store = InMemoryRunStore()
    event = new_event("r1", "custom", "src", payload)
    try:
        text = event.model_dump_json()
    except PydanticSerializationError:
        with pytest.raises(PydanticSerializationError):  # refused as before
            store.add_event(event)
        return
    store.add_event(event)
    (stored,) = store.get_events("r1")
    assert stored == Event.model_validate_json(text)
    assert stored.model_dump_json() == text


def test_a_stored_event_cannot_be_changed_through_the_emitted_object() -> None:
    store = InMemoryRunStore()
    event = new_event("r1", "custom", "src", {"items": [1, 2], "meta": {"a": 1}})
    store.add_event(event)
    event.payload["items"].append(3)
    event.payload["meta"]["a"] = 2
    (stored,) = store.get_events("r1")
    assert stored.payload == {"items": [1, 2], "meta": {"a": 1}}


def test_a_payload_with_a_key_that_is_not_text_is_refused_as_validation_refuses_it() -> None:
    with pytest.raises(ValidationError):
        _validated({1: "an int key"})
    with pytest.raises(ValidationError):
        new_event("r1", "custom", "src", {"api_key": "k", 1: "an int key"})


def test_event_order_and_timestamps_are_kept() -> None:
    store = InMemoryRunStore()
    events = [
        new_event("r1", f"type.{n}", "src", {"n": n, "at": utc_now().isoformat()})
        for n in range(50)
    ]
    for event in events:
        store.add_event(event)
    assert store.get_events("r1") == events


def _texts(seed: int, count: int) -> list[str]:
    pieces = [
        "api_key", "API-KEY", "apikey", "auth_token", "Access-Token", "authorization", "secret",
        "PASSWORD", "passwd", "sk-", "SK-", "sk-ant-", "Bearer ", "bearer ", "abcdefgh1234",
        "://", "@", "user:pw", "db://app:pw@host", "\"", "'", ": ", "=", " ", ",", "}", "x",
        "\u0130", "\u212a",
    ]  # fmt: skip
    rng = random.Random(seed)
    return ["".join(rng.choices(pieces, k=rng.randint(0, 7))) for _ in range(count)]


def test_a_text_in_a_payload_is_redacted_exactly_as_redact_text_does() -> None:
    for text in _texts(13, 20_000):
        assert redact({"value": text}) == {"value": redact_text(text)}, text
        assert new_event("r", "t", "s", {"value": text}).payload == {"value": redact_text(text)}


def test_secret_keys_are_redacted_whatever_the_value() -> None:
    payload = {"Authorization": 123, "db_password": None, "x": {"secret": [1, 2]}}
    assert new_event("r", "t", "s", payload).payload == {
        "Authorization": REDACTED,
        "db_password": REDACTED,
        "x": {"secret": REDACTED},
    }
