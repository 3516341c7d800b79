"""A rate limit, port or token the server cannot use is refused before it serves: the rate
limit was checked at the first request (every request then answered 500), NaN let every
request through, port 99999 was served on 34463, and a token read with its newline let no
one in (a blank one secured nothing anyone could send)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from serve_support import make_desk

from deskwork.cli import main
from deskwork.exceptions import ConfigurationError
from deskwork.serve import create_app


@pytest.mark.parametrize(("rate", "burst"), [(-1.0, 20), (float("nan"), 20), (1.0, 0)])
def test_create_app_refuses_a_rate_limit_it_cannot_keep(rate: float, burst: int) -> None:
    with pytest.raises(ConfigurationError, match="rate_limit"):
        create_app(make_desk(), rate_limit=rate, rate_burst=burst)


def test_the_cli_refuses_a_bad_rate_limit_before_loading_the_desk(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "no_such_module:desk", "--rate-limit", "nan"]) == 2
    assert "rate_limit must be a number above 0" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["serve", "app:desk"], ["demo", "--serve"]])
@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(
    command: list[str], port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--port", port])
    assert exit_.value.code == 2
    assert "a port is a number from 0 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize("token", ["s3cret\n", "  s3cret "])
def test_a_token_with_a_newline_lets_its_holder_in(live_factory: Any, token: str) -> None:
    live = live_factory(token=token)
    with httpx.Client(base_url=live.url) as client:
        assert client.get("/runners", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/runners").status_code == 401


def test_a_blank_token_is_refused_before_serving(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigurationError, match="blank"):
        create_app(make_desk(), token="  \n")
    monkeypatch.setenv("DESKWORK_SERVE_TOKEN", " ")
    assert main(["serve", "no_such_module:desk", "--host", "0.0.0.0"]) == 2
    assert "the bearer token is blank" in capsys.readouterr().err


@pytest.mark.parametrize(
    "options",
    [{"poll_interval": 0}, {"poll_interval": float("nan")}, {"max_body_bytes": -1}],
)
def test_create_app_refuses_a_poll_interval_or_body_limit_it_cannot_use(
    options: dict[str, Any],
) -> None:
    with pytest.raises(ConfigurationError, match=r"poll_interval|max_body_bytes"):
        create_app(make_desk(), **options)


@pytest.mark.parametrize("port", [99999, -1, "8080"])
def test_serve_refuses_a_port_out_of_range_before_serving(port: Any) -> None:
    from deskwork.serve import serve

    with pytest.raises(ConfigurationError, match="a port is a number from 0 to 65535"):
        serve(make_desk(), port=port, tune=False)


@pytest.mark.parametrize("host", ["127.example.com", "127.0.0.1.attacker.net", "0.0.0.0", "::"])
def test_binding_beyond_loopback_needs_a_token(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from deskwork.serve._server import check_bind

    monkeypatch.delenv("DESKWORK_SERVE_TOKEN", raising=False)
    with pytest.raises(ConfigurationError, match="exposes the API"):
        check_bind(host, None)
    for loopback in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert check_bind(loopback, None) is None


async def test_served_without_a_token_it_answers_only_requests_to_this_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import uvicorn

    from deskwork.serve import serve

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    monkeypatch.delenv("DESKWORK_SERVE_TOKEN", raising=False)
    serve(make_desk(), tune=False)
    transport = httpx.ASGITransport(app=served[0])
    for host, status in [("127.0.0.1:8765", 200), ("localhost", 200), ("[::1]:8765", 200),
                         ("rebound.example.com", 400), ("127.evil.example:8765", 400)]:  # fmt: skip
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            answer = await client.get("/runners", headers={"host": host})
        assert answer.status_code == status, host
