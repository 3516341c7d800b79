"""Record a test's HTTP exchanges with a model provider once; replay them offline after.

::

    from deskwork.testing import recorded

    def test_summary() -> None:
        with recorded("tests/cassettes/test_summary.yaml"):
            report = Desk(model="openai/gpt-5-nano").run(worker, "Summarize ...")
        assert report.status == "completed"

Run the test once with ``DESKWORK_RECORD=1`` (and the provider's API key): the exchanges
are saved as a readable YAML cassette. Every later run replays them: no key, no network.

- A request is found by its key, a hash of method, host, path, query and JSON body (keys
  sorted); the port is left out, so a local test server may listen on any port. The key is
  in the cassette (``x-deskwork-request-key``) next to the request body.
- A request without a recording fails: the model call gets an error naming the key, and
  leaving the ``with`` block raises :class:`CassetteMissError` listing every missed request.
- While replaying, connecting any internet socket raises :class:`NetworkBlockedError`.
- Only ``content-type`` is kept of the headers, and ``key``/``api_key`` query parameters
  are dropped, so API keys never reach the cassette.

HTTP interception is vcrpy's (the ``testing`` extra): it covers httpx (which LiteLLM's
OpenAI-compatible providers use), aiohttp, requests and urllib3.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from deskwork._extras import require
from deskwork.exceptions import DeskworkError

__all__ = ["Cassette", "CassetteMissError", "NetworkBlockedError", "recorded", "request_key"]

RecordMode = Literal["record", "replay"]
KEY_HEADER = "x-deskwork-request-key"
RECORD_ENV = "DESKWORK_RECORD"
_SECRET_QUERY = {"key", "api_key", "api-key", "access_token"}
_KEPT_HEADERS = {"content-type"}


class CassetteMissError(DeskworkError):
    """A replayed test made a request that has no recording."""


class NetworkBlockedError(DeskworkError, OSError):
    """A replayed test tried to open a network connection."""


@dataclass
class Cassette:
    """What :func:`recorded` yields: the file, the mode, and the requests seen so far."""

    path: Path
    mode: RecordMode
    seen: list[str] = field(default_factory=list)
    """``"KEY METHOD URL"`` of each distinct request made inside the block, first seen first."""
    misses: list[str] = field(default_factory=list)
    """The requests that had no recording (replay mode)."""


def request_key(method: str, uri: str, body: bytes | str | None) -> str:
    """The key a request is recorded under: 16 hex digits of a SHA-256."""
    parts = urlsplit(uri)
    query = sorted((k, v) for k, v in parse_qsl(parts.query) if k.lower() not in _SECRET_QUERY)
    canonical = {
        "method": method.upper(),
        "host": (parts.hostname or "").lower(),
        "path": parts.path,
        "query": query,
        "body": _canonical_body(body),
    }
    digest = hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()
    return digest[:16]


def _canonical_body(body: bytes | str | None) -> Any:
    if body is None or body in (b"", ""):
        return None
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return json.loads(text)  # the same JSON in any key order is the same request
    except ValueError:
        return text


def _mode(mode: RecordMode | None) -> RecordMode:
    if mode is not None:
        return mode
    return "record" if os.environ.get(RECORD_ENV, "") not in ("", "0") else "replay"


@contextmanager
def recorded(path: str | Path, *, mode: RecordMode | None = None) -> Iterator[Cassette]:
    """Record (``DESKWORK_RECORD=1`` or ``mode="record"``) or replay the HTTP exchanges
    made inside the block.

    Raises:
        CassetteMissError: replaying without a cassette file, or (on leaving the block) a
            request had no recording.
        MissingExtraError: vcrpy is not installed (``pip install 'deskwork[testing]'``).
    """
    vcr = require("vcr", "testing")
    cassette = Cassette(Path(path), _mode(mode))
    if cassette.mode == "replay" and not cassette.path.exists():
        raise CassetteMissError(
            f"no cassette at {cassette.path}: run the test once with {RECORD_ENV}=1"
            " (and the provider's API key) to record it"
        )
    if cassette.mode == "record":
        cassette.path.parent.mkdir(parents=True, exist_ok=True)
        cassette.path.unlink(missing_ok=True)  # a recording starts from scratch
    recorder = vcr.VCR(
        record_mode="all" if cassette.mode == "record" else "none",
        match_on=["deskwork_key"],
        before_record_request=lambda request: _keyed(request, cassette),
        before_record_response=_clean_response,
        decode_compressed_response=True,
    )
    recorder.register_matcher("deskwork_key", _same_key)
    with recorder.use_cassette(str(cassette.path)) as vcr_cassette:
        with _network_blocked(cassette.mode == "replay"):
            yield cassette
        recorded_keys = {r.headers.get(KEY_HEADER) for r in vcr_cassette.requests}
    if cassette.mode == "record" and not cassette.path.exists():
        cassette.path.write_text("interactions: []\nversion: 1\n")  # no requests: say so
    _check_misses(cassette, recorded_keys)


def _keyed(request: Any, cassette: Cassette) -> Any:
    """The request as recorded: its key added, secrets and noise left out."""
    key = request_key(request.method, request.uri, request.body)
    parts = urlsplit(request.uri)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k.lower() not in _SECRET_QUERY]
    request.uri = parts._replace(query=urlencode(query)).geturl()
    request.headers = {k: v for k, v in request.headers.items() if k.lower() in _KEPT_HEADERS}
    request.headers[KEY_HEADER] = key
    entry = f"{key} {request.method} {request.uri}"
    if entry not in cassette.seen:  # vcrpy looks at each request several times
        cassette.seen.append(entry)
    return request


def _same_key(r1: Any, r2: Any) -> None:
    if r1.headers.get(KEY_HEADER) != r2.headers.get(KEY_HEADER):
        raise AssertionError(f"{r1.headers.get(KEY_HEADER)} != {r2.headers.get(KEY_HEADER)}")


def _clean_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    response["headers"] = {k: v for k, v in headers.items() if k.lower() in _KEPT_HEADERS}
    return response


def _check_misses(cassette: Cassette, recorded_keys: set[Any]) -> None:
    if cassette.mode != "replay":
        return
    cassette.misses = [entry for entry in cassette.seen if entry.split(" ", 1)[0]
                       not in recorded_keys]  # fmt: skip
    if cassette.misses:
        listed = "\n  ".join(cassette.misses)
        raise CassetteMissError(
            f"{len(cassette.misses)} request(s) have no recording in {cassette.path}:\n"
            f"  {listed}\nthe request changed (prompt, tools, model, parameters) or was never"
            f" recorded: record the test again with {RECORD_ENV}=1"
        )


@contextmanager
def _network_blocked(active: bool) -> Iterator[None]:
    """Refuse internet (IPv4/IPv6) connections while active; Unix sockets still work."""
    if not active:
        yield
        return
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def refuse(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise NetworkBlockedError(
                f"network access to {address!r} is blocked while replaying a cassette"
            )

    def connect(sock: socket.socket, address: Any) -> None:
        refuse(sock, address)
        original_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        refuse(sock, address)
        return original_connect_ex(sock, address)

    setattr(socket.socket, "connect", connect)  # noqa: B010 - patching a method on purpose
    setattr(socket.socket, "connect_ex", connect_ex)  # noqa: B010
    try:
        yield
    finally:
        setattr(socket.socket, "connect", original_connect)  # noqa: B010
        setattr(socket.socket, "connect_ex", original_connect_ex)  # noqa: B010
