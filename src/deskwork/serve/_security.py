"""ASGI middleware: bearer-token check (constant time) and a request body size limit.

Both answer before routing, so a refused request learns nothing about runs or runners.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from deskwork.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "ASGIApp",
    "Receive",
    "Scope",
    "SecurityMiddleware",
    "Send",
    "check_token",
    "host_name",
    "is_loopback",
    "is_public",
    "reply",
]

DEFAULT_MAX_BODY_BYTES = 1_000_000
"""Bodies larger than this are refused with 413."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_PUBLIC_PREFIXES = ("/static/",)
_PUBLIC_PATHS = frozenset({"/", "/favicon.ico"})


def check_token(token: str | None) -> str | None:
    """The bearer token to require: ``token`` without surrounding whitespace (a token read
    from a file or a secret often ends with a newline, which no ``Authorization`` header
    can carry: every request was refused), ``None`` for none or ``""``.

    Raises:
        ConfigurationError: the token is only whitespace.
    """
    if not token:
        return None
    if not token.strip():
        raise ConfigurationError("the bearer token is blank: give one with characters")
    return token.strip()


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine: ``localhost`` or a loopback
    address (``127.x.x.x``, ``::1``), not a name that merely starts with ``127.``
    (``127.example.com`` can resolve anywhere)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def reply(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def is_public(scope: Scope) -> bool:
    """Whether the request reads the viewer's page or assets (no data), or is a CORS
    preflight (no credentials, no data)."""
    path = str(scope.get("path", ""))
    if scope.get("method") == "OPTIONS":
        return True
    return scope.get("method") == "GET" and (
        path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIXES)
    )


def host_name(header: bytes) -> str:
    """The host of a ``Host`` header, without its port (``[::1]:8765`` -> ``::1``)."""
    text = header.decode("latin-1").strip()
    if text.startswith("["):
        return text[1:].partition("]")[0]
    return text.rpartition(":")[0] if text.count(":") == 1 else text


class SecurityMiddleware:
    """Refuses requests without the bearer token (401) and bodies over the limit (413);
    with ``local_only``, requests whose ``Host`` is not this machine (400).

    The viewer's static files are public (they hold no data); the viewer sends the token
    with its API calls.
    """

    def __init__(
        self, app: ASGIApp, *, token: str | None, max_body_bytes: int, local_only: bool = False
    ) -> None:
        self.app = app
        token = check_token(token)
        self.token = token.encode() if token else None
        self.max_body_bytes = max_body_bytes
        self.local_only = local_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.local_only and not is_loopback(host_name(headers.get(b"host", b""))):
            # a page of another site whose name now resolves to 127.0.0.1 (DNS rebinding)
            # is same-origin to the browser: it could read runs and answer pauses
            await reply(send, 400, "this server answers requests to localhost only", [])
            return
        if self.token is not None and not is_public(scope) and not self._authorized(headers):
            await reply(
                send, 401, "missing or invalid bearer token", [(b"www-authenticate", b"Bearer")]
            )
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            await reply(send, 413, f"request body over {self.max_body_bytes} bytes", [])
            return
        await self._call_limited(scope, receive, send)

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        assert self.token is not None
        value = headers.get(b"authorization", b"")
        scheme, _, given = value.partition(b" ")
        expected = self.token
        ok = hmac.compare_digest(given.strip(), expected)
        return ok and scheme.lower() == b"bearer"

    async def _call_limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body first (it is small JSON), so a chunked body over the limit is
        refused before the app sees it; then hand the app the buffered body."""
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.max_body_bytes:
                await reply(send, 413, f"request body over {self.max_body_bytes} bytes", [])
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the disconnect

        await self.app(scope, replay, send)
