"""Pins of the secret patterns in ``deskwork.core.redact`` that mutation testing found loose.

mutmut 3 does not mutate module-level constants, so the regular expressions were mutated by
hand (docs/reliability.md); each test here kills one mutant the rest of the suite let live.
"""

from __future__ import annotations

from enum import StrEnum

import pytest

from deskwork.core.redact import (
    REDACTED,
    may_hold_secrets,
    redact,
    redact_str_keyed,
    redact_text,
)

pytestmark = pytest.mark.reliability


def test_a_bearer_token_is_redacted_whole_whatever_its_characters() -> None:
    token = "abc123.def_456-ghi~jk+lm/no=="
    assert redact_text(f"sent Bearer {token} upstream") == f"sent {REDACTED} upstream"


def test_an_unquoted_value_stops_at_the_closing_brace() -> None:
    assert redact_text('{"api_key": abc123}') == f'{{"api_key": {REDACTED}}}'


def test_a_space_before_the_colon_does_not_hide_a_secret() -> None:
    assert redact_text('"password" : "hunter2"') == f'"password" : "{REDACTED}"'


def test_an_anthropic_style_key_inside_text_is_redacted() -> None:
    out = redact({"note": "key sk-ant-api03-abcdefgh1234 in a log line"})
    assert out == {"note": f"key {REDACTED} in a log line"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("at postgresql://app:s3cr3t@db/runs", f"at postgresql://app:{REDACTED}@db/runs"),
        ("redis://:hunter2@cache", f"redis://:{REDACTED}@cache"),
    ],
)  # fmt: skip
def test_the_password_of_a_url_is_redacted_and_the_rest_kept(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize("text", ["see https://example.com/docs", "mail ops@example.com"])
def test_a_url_or_an_address_alone_holds_no_secret(text: str) -> None:
    assert may_hold_secrets(text) is False
    assert redact_text(text) == text


def test_a_url_with_user_info_may_hold_a_secret() -> None:
    assert may_hold_secrets("postgresql://app:pw@db/x") is True


class Field(StrEnum):
    PASSWORD = "password"
    NOTE = "note"


def test_every_kind_of_dict_key_and_value_is_redacted_or_kept_as_it_was() -> None:
    secret = "sk-abcdefgh12345678"
    payload = {
        Field.PASSWORD: "hunter2",  # a str subclass key that names a secret
        Field.NOTE: f"key {secret}",
        7: f"Bearer {secret}",  # a key that is not text: only the value is looked at
        "password": "hunter2",
        "count": 3,
        "ratio": 0.5,
        "flag": False,
        "none": None,
        "plain": "nothing to hide",
        "label": Field.NOTE,  # a str subclass value
        "nested": ({"api_key": "k"}, [secret]),
        "raw": b"sk-abcdefgh12345678",  # not text: kept as it is
    }
    assert redact(payload) == {
        Field.PASSWORD: REDACTED,
        Field.NOTE: f"key {REDACTED}",
        7: REDACTED,
        "password": REDACTED,
        "count": 3,
        "ratio": 0.5,
        "flag": False,
        "none": None,
        "plain": "nothing to hide",
        "label": "note",
        "nested": [{"api_key": REDACTED}, [REDACTED]],
        "raw": b"sk-abcdefgh12345678",
    }


def test_redact_str_keyed_redacts_text_keyed_payloads_only() -> None:
    assert redact_str_keyed({"token": "Bearer abcdefgh", "n": 1, "s": "ok"}) == {
        "token": REDACTED,
        "n": 1,
        "s": "ok",
    }
    assert redact_str_keyed({"a": "x", 1: "y"}) is None
    assert redact_str_keyed({Field.NOTE: "x"}) is None  # an enum key is not plain text
    assert redact_str_keyed({}) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dsn POSTGRESQL://app:s3cr3t@db/x", f"dsn POSTGRESQL://app:{REDACTED}@db/x"),
        ("PASSWORD=hunter2", f"PASSWORD={REDACTED}"),
        ("API_KEY=abc", f"API_KEY={REDACTED}"),
    ],
)
def test_a_dict_value_in_capitals_is_redacted_like_any_text(text: str, expected: str) -> None:
    assert redact({"v": text}) == {"v": expected}
