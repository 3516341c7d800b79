"""A password inside a connection URL never survives redaction (driver errors quote DSNs)."""

from __future__ import annotations

import pytest

from deskwork.core.message import Message
from deskwork.core.redact import REDACTED, may_hold_secrets, redact, redact_model, redact_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://user:pw@host/db", f"postgresql://user:{REDACTED}@host/db"),
        (
            "could not connect: postgresql+psycopg://admin:s3cr%40t@db.example.com:5432/app?x=1",
            f"could not connect: postgresql+psycopg://admin:{REDACTED}@db.example.com:5432/app?x=1",
        ),
        ("redis://:hunter2@cache:6379/0", f"redis://:{REDACTED}@cache:6379/0"),
        ("amqp://guest:p:a:ss@mq/", f"amqp://guest:{REDACTED}@mq/"),
    ],
)
def test_url_password_is_redacted(text: str, expected: str) -> None:
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com:8443/path?q=1",  # a port is not a password
        "mailto:someone@example.com and https://example.com/a",
        "https://user@example.com/repo.git",  # user name only
        "see http://host:8080/docs@v2",  # '@' after the path
    ],
)
def test_urls_without_password_are_unchanged(text: str) -> None:
    assert redact_text(text) == text


def test_url_password_in_nested_data_and_models() -> None:
    data = {"error": {"detail": ["connect to mysql://root:toor@10.0.0.5/shop failed"]}}
    assert "toor" not in str(redact(data))
    assert may_hold_secrets("postgresql://u:pw@h/db")
    message = Message(role="tool", content="dsn=postgres://app:Sup3r@db/prod refused")
    assert "Sup3r" not in redact_model(message).content
