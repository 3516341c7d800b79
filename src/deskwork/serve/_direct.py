"""Writes of an event stream straight to the socket's transport, when uvicorn serves it.

Handing a frame to the ASGI server costs an ``await send(...)`` through every middleware
and uvicorn's checks, about as much as writing to the socket itself; a run followed by
many clients pays it once per client per event. When the response is served by uvicorn's
``httptools`` protocol and uses chunked transfer encoding (an event stream: no
``content-length``), the stream can write its chunks to the connection's transport
itself, without awaiting: ``b"%x\\r\\n" % len(data) + data + b"\\r\\n"`` is exactly what
uvicorn's ``send`` writes for a body with ``more_body``. The response still starts and
ends through ``send``, so uvicorn's state of the request stays right.

A direct write is refused (the stream then awaits ``send`` as on any server, which waits
for the transport to drain) when the client went away, the response is complete, or the
transport is closing or over its high-water mark: flow control is the transport's, as with
``send``. Any other server, a change in uvicorn's request cycle that this module does not
recognize, or a middleware between uvicorn and the app's routes other than the app's own
(it may need to see or change the bytes: the app notes the ``send`` it got from the server
under :data:`SERVER_SEND` only when there is none) leaves :func:`direct_writer` returning
``None``: streams then only use ``send``.

The request cycle is found from that ``send`` (a bound method of uvicorn's cycle), not
from the ``receive`` the route gets: FastAPI's own OpenTelemetry layer wraps ``receive``
and ``send`` inside the app whenever a tracer, meter or logger provider is configured for
the process, and it needs only the response's start and end, which still go through
``send``.
"""

from __future__ import annotations

import sys
from typing import Any

from deskwork.serve._security import Scope

__all__ = ["SERVER_SEND", "DirectWriter", "chunk", "direct_writer"]

SERVER_SEND = "deskwork.server_send"
"""Scope key: the ``send`` the server gave the app, set when no middleware of the user's
wraps the app's routes."""

_HTTPTOOLS = "uvicorn.protocols.http.httptools_impl"
_CYCLE_FIELDS = ("transport", "flow", "disconnected", "response_complete", "chunked_encoding")


class DirectWriter:
    """Writes body chunks of one started chunked response to its uvicorn transport."""

    __slots__ = ("_cycle",)

    def __init__(self, cycle: Any) -> None:
        self._cycle = cycle

    def ready(self) -> bool:
        """Whether :meth:`write` may write now (else: await the server's ``send``)."""
        cycle = self._cycle
        return not (
            cycle.disconnected
            or cycle.response_complete
            or cycle.flow.write_paused
            or cycle.transport.is_closing()
        )

    def write(self, data: bytes) -> None:
        """Write ``data`` (not empty) as one chunk; call only right after :meth:`ready`."""
        self._cycle.transport.write(chunk(data))

    def write_chunk(self, data: bytes) -> None:
        """Write ``data``, already made a chunk by :func:`chunk` (one made for many
        streams); call only right after :meth:`ready`."""
        self._cycle.transport.write(data)


def chunk(data: bytes) -> bytes:
    """``data`` (not empty) as one chunk of a body in chunked transfer encoding."""
    return b"%x\r\n%b\r\n" % (len(data), data)


def direct_writer(scope: Scope) -> DirectWriter | None:
    """A :class:`DirectWriter` for the response of the request of ``scope``, once its start
    was sent: ``None`` unless the app got the server's own ``send`` (``scope[SERVER_SEND]``)
    and it belongs to a request cycle of uvicorn's httptools protocol that serves the
    response with chunked encoding."""
    server_send: Any = scope.get(SERVER_SEND)
    cycle: Any = getattr(server_send, "__self__", None)  # else: a middleware of the user's
    module = sys.modules.get(_HTTPTOOLS)
    if cycle is None or type(cycle) is not getattr(module, "RequestResponseCycle", None):
        return None
    if not all(hasattr(cycle, name) for name in _CYCLE_FIELDS):
        return None
    if not hasattr(cycle.flow, "write_paused"):
        return None
    if cycle.chunked_encoding is not True or cycle.scope.get("method") == "HEAD":
        return None
    return DirectWriter(cycle)
