"""A database error deskwork reports (a driver's or DBOS's message) shows no password of the
database URL, as the URL spells it or percent-decoded as the driver used it, and no other
secret it quotes."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.runtime._executor_lock import open_executor_lock
from deskwork.store._url import scrub

URL = "postgresql://deskwork:p%40ss%21word@127.0.0.1:1/nowhere"
KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    "echoed",
    [
        'password authentication failed: "p@ss!word"',
        "cannot reach postgresql://deskwork:p@ss!word@127.0.0.1:1/nowhere",
        "cannot reach postgresql://deskwork:p%40ss%21word@127.0.0.1:1/nowhere",
    ],
)
def test_a_percent_encoded_password_is_masked_decoded_too(echoed: str) -> None:
    text = scrub(echoed, URL)
    assert "p@ss" not in text and "ss!word" not in text and "p%40ss" not in text
    assert "<redacted>" in text


def test_an_executor_lock_that_cannot_connect_tells_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise psycopg.OperationalError(f'password "p@ss!word" refused (api_key={KEY})')

    monkeypatch.setattr(psycopg, "connect", refuse)
    with pytest.raises(ConfigurationError) as caught:
        open_executor_lock(URL).hold("executor-1")
    message = str(caught.value)
    assert "cannot connect to postgresql://deskwork:<redacted>@127.0.0.1:1/nowhere" in message
    assert "p@ss!word" not in message and KEY not in message
