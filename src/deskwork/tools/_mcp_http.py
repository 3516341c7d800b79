"""HTTP clients for the MCP transports (private to :mod:`deskwork.tools.mcp`).

The MCP SDK 2.x speaks HTTP through ``httpx2``. Users hand deskwork an ``httpx.AsyncClient``
(or an ``httpx2.AsyncClient``) configured for their server: an ``Authorization`` header, an
``auth=`` flow, certificates, a proxy, event hooks. :func:`mcp_http_client` wraps such a client
in an ``httpx2.AsyncClient`` whose transport sends every request through the user's client
(``build_request`` + ``send``), so all of that configuration applies, and closing the wrapper
never closes the user's client.

Timeouts are the MCP transport's (30 s; 300 s between events of a stream), so an idle event
stream is not cut by httpx's 5 s default. Redirects are left to the MCP SDK, which follows
only those that stay on the server's origin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx2

__all__ = ["mcp_http_client"]

HTTP_TIMEOUT = 30.0
STREAM_READ_TIMEOUT = 300.0


def mcp_http_client(
    user_client: Any | None,
    headers: Mapping[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    *,
    on_status: Callable[[int], None] | None = None,
) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` for an MCP transport.

    Args:
        user_client: the user's ``httpx.AsyncClient`` or ``httpx2.AsyncClient``, or ``None``
            for a plain client.
        headers: extra headers for every request (on top of the user client's own).
        timeout: the transport's timeout; defaults to 30 s with a 300 s read timeout.
        on_status: called with the status of every HTTP error response (>= 400, but 405).

    Returns:
        A new client; the caller closes it (that never closes ``user_client``).
    """
    timeout = timeout or httpx2.Timeout(HTTP_TIMEOUT, read=STREAM_READ_TIMEOUT)

    async def note_status(response: httpx2.Response) -> None:
        # 405 is the normal answer of servers without the optional GET event stream
        if on_status is not None and response.status_code >= 400 and response.status_code != 405:
            on_status(response.status_code)

    transport = None if user_client is None else _ClientTransport(user_client)
    return httpx2.AsyncClient(
        headers=dict(headers or {}),
        timeout=timeout,
        transport=transport,
        event_hooks={"response": [note_status]},
    )


class _ClientTransport(httpx2.AsyncBaseTransport):
    """Sends httpx2 requests through another (httpx or httpx2) ``AsyncClient``."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._foreign = not isinstance(client, httpx2.AsyncClient)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        outgoing = self._client.build_request(
            request.method,
            str(request.url),
            headers=list(request.headers.multi_items()),
            content=body or None,
            extensions={"timeout": request.extensions.get("timeout")},
        )
        try:
            response = await self._client.send(outgoing, stream=True, follow_redirects=False)
        except Exception as exc:
            raise self._translate(exc, request) from exc
        return httpx2.Response(
            response.status_code,
            headers=list(response.headers.multi_items()),
            stream=_ResponseStream(response, self._translate, request),
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )

    def _translate(self, exc: Exception, request: httpx2.Request) -> Exception:
        """Turn an ``httpx`` transport error into the ``httpx2`` one the MCP SDK handles."""
        if not self._foreign or isinstance(exc, httpx2.HTTPError):
            return exc
        kind = getattr(httpx2, type(exc).__name__, None)
        if isinstance(kind, type) and issubclass(kind, httpx2.TransportError):
            return kind(str(exc), request=request)
        return httpx2.TransportError(f"{type(exc).__name__}: {exc}", request=request)

    async def aclose(self) -> None:
        """Leave the user's client open: its owner closes it."""


class _ResponseStream(httpx2.AsyncByteStream):
    """The raw body of a streamed response of the user's client."""

    def __init__(self, response: Any, translate: Any, request: httpx2.Request) -> None:
        self._response = response
        self._translate = translate
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except Exception as exc:
            raise self._translate(exc, self._request) from exc

    async def aclose(self) -> None:
        await self._response.aclose()
