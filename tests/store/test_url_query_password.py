"""A password given in a PostgreSQL URL's query (``?password=...`` or ``sslpassword``, which
libpq takes as it takes ``user:password@``) is masked wherever deskwork shows the URL or a
driver's error about it: it was printed as it was in every 'cannot connect' error (plain and
durable desks), log line and worker banner."""

from __future__ import annotations

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.store._url import redact_url, scrub
from deskwork.testing import ScriptedAdapter, reply

SECRET = "Hunter2%40Secret"  # Hunter2@Secret, percent-encoded in the URL
URL = f"postgresql://deskwork@127.0.0.1:1/nowhere?sslmode=disable&password={SECRET}&x=1"


def test_redact_url_masks_a_password_in_the_query() -> None:
    assert redact_url(URL) == (
        "postgresql://deskwork@127.0.0.1:1/nowhere?sslmode=disable&password=<redacted>&x=1"
    )
    assert "Hunter2" not in redact_url(URL.replace("password=", "sslpassword="))
    assert redact_url("sqlite:////data/deskwork.db") == "sqlite:////data/deskwork.db"


@pytest.mark.parametrize(
    "echoed", [f"bad URL {URL}", 'password "Hunter2@Secret" refused', f"it used {SECRET}"]
)
def test_scrub_masks_a_password_in_the_query_as_written_and_decoded(echoed: str) -> None:
    assert "Hunter2" not in scrub(echoed, URL)


@pytest.mark.parametrize("durable", [False, True])
def test_an_unreachable_database_error_shows_no_query_password(durable: bool) -> None:
    desk = Desk(
        model="m", adapter=ScriptedAdapter([reply("ok")]), database_url=URL, durable=durable
    )
    try:
        with pytest.raises(ConfigurationError) as refused:
            desk.run(Worker(name="w"), "hello")
        assert "Hunter2" not in str(refused.value) and "<redacted>" in str(refused.value)
    finally:
        desk.close()
