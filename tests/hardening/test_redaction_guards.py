"""Guards for secret redaction (each branch a mutation could break without a failing test)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from deskwork.core.redact import REDACTED, may_hold_secrets, redact, redact_model, redact_text
from deskwork.core.tool_call import ToolCall, ToolResult

# every spelling the secret-key list covers
SECRET_WORDS = [
    "api_key",
    "api-key",
    "apikey",
    "auth_token",
    "auth-token",
    "authtoken",
    "access_token",
    "access-token",
    "accesstoken",
    "authorization",
    "secret",
    "password",
    "passwd",
]


def test_key_value_text_keeps_the_key_and_replaces_only_the_value() -> None:
    assert redact_text("password=hunter2") == f"password={REDACTED}"
    assert redact_text("login with password=hunter2 now") == f"login with password={REDACTED} now"
    assert redact_text("API_KEY = abc123") == f"API_KEY = {REDACTED}"
    assert redact_text("a=1&password=hunter2&b=2") == f"a=1&password={REDACTED}&b=2"


def test_quoted_values_keep_their_quotes() -> None:
    assert redact_text("password='hunter 2'") == f"password='{REDACTED}'"
    assert redact_text('{"password": "hunter2"}') == f'{{"password": "{REDACTED}"}}'
    assert redact_text("{'api_key': 'abc'}") == f"{{'api_key': '{REDACTED}'}}"


@pytest.mark.parametrize("word", SECRET_WORDS)
def test_every_secret_word_is_redacted_as_a_key(word: str) -> None:
    for key in (word, word.upper(), f"my_{word}"):
        assert redact({key: "v4lue", "other": "kept"}) == {key: REDACTED, "other": "kept"}
        assert redact_text(f"{key}=v4lue") == f"{key}={REDACTED}"
        assert json.loads(redact_text(json.dumps({key: "v4lue"}))) == {key: REDACTED}
        assert may_hold_secrets(f"{key}=v4lue")


def test_innocent_text_and_keys_are_left_alone() -> None:
    text = "the weather in Paris is mild; tokens=42, keys=3"
    assert not may_hold_secrets(text)
    assert redact_text(text) == text
    assert redact({"token_count": 5, "key": "k", "author": "ann"}) == {
        "token_count": 5,
        "key": "k",
        "author": "ann",
    }


def test_secret_values_are_redacted_wherever_they_appear() -> None:
    assert redact_text("Authorization: Bearer abcdef123456") == f"Authorization: {REDACTED}"
    assert redact_text("key sk-abcdefgh12345678 leaked") == f"key {REDACTED} leaked"
    assert redact(["sk-abcdefgh12345678", 3]) == [REDACTED, 3]
    assert redact(("x", {"nested": {"password": "p"}})) == ["x", {"nested": {"password": REDACTED}}]


class Holder(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    note: str
    extra: dict[str, Any] = {}
    blob: Any = None


def test_redact_model_returns_the_same_object_when_nothing_is_secret() -> None:
    clean = Holder(note="hello", extra={"count": 1})
    assert redact_model(clean) is clean


def test_redact_model_redacts_text_keys_and_nested_models() -> None:
    model = Holder(note="use password=hunter2", extra={"api_key": "abc", "ok": 1})
    redacted = redact_model(model)
    assert isinstance(redacted, Holder)
    assert redacted.note == f"use password={REDACTED}"
    assert redacted.extra == {"api_key": REDACTED, "ok": 1}
    assert model.note == "use password=hunter2"  # the original is untouched

    call = ToolCall(id="c1", name="login", arguments={"user": "ann", "password": "pw"})
    assert redact_model(call).arguments == {"user": "ann", "password": REDACTED}


class Opaque:
    def __str__(self) -> str:
        return "opaque password=hunter2"


def test_redact_model_falls_back_for_values_json_cannot_hold() -> None:
    result = ToolResult(content="done", data={"handle": Opaque()})
    stored = redact_model(result)  # must not raise PydanticSerializationError
    assert isinstance(stored, ToolResult)
    assert stored.content == "done"
    assert "hunter2" not in json.dumps(stored.data, default=str)
    holder = redact_model(Holder(note="n", blob=Opaque()))
    assert holder.blob == f"opaque password={REDACTED}"
