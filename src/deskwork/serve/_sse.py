"""The Server-Sent Events response of the hub's streams, written straight to the ASGI server.

A run followed by many clients writes each event to every one of them, so this path is
kept short: the stream's own coroutine waits on its :class:`Subscription` and hands the
frames to the server with one ``http.response.body`` message per wake-up (every frame
already waiting goes in that one write). When uvicorn serves the stream, a waiting stream
writes live events straight to the connection's transport instead, in the hub's delivery
of the event (:mod:`deskwork.serve._direct`): one loop over the clients, no wake-up of
their coroutines. There is no async generator, no task group and no task per write between
the hub and the socket; one task per connection waits for the client to go away and then
closes the subscription, which ends the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.responses import Response

from deskwork.serve._direct import DirectWriter, direct_writer
from deskwork.serve._hub import EventHub, Subscription
from deskwork.serve._security import Receive, Scope, Send

__all__ = ["SSE_HEADERS", "HubStreamResponse", "Write"]

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

Write = Callable[[bytes], Awaitable[None]]
"""Sends bytes of the stream to the client."""

Follow = Callable[[Subscription, Write, DirectWriter | None], Awaitable[None]]
"""Writes a stream from a subscription until the stream ends or the subscription closes
(with the direct writer of the connection, if its server has one)."""


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class HubStreamResponse(Response):
    """A ``text/event-stream`` response that ``follow`` writes from a subscription of
    ``hub`` to ``run_id`` (every run when ``None``), made when the response starts.

    The subscription closes when the client disconnects (``follow`` then returns at its
    next wake-up) or when ``follow`` returns.
    """

    media_type = "text/event-stream"

    def __init__(self, hub: EventHub, run_id: str | None, follow: Follow) -> None:
        self.hub = hub
        self.run_id = run_id
        self.follow = follow
        self.status_code = 200
        self.background = None
        self.init_headers(SSE_HEADERS)  # no body: no content-length, as a StreamingResponse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        sub = self.hub.subscribe(self.run_id)
        gone = asyncio.ensure_future(_until_disconnect(receive))
        gone.add_done_callback(lambda _: sub.close())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            await self.follow(sub, write, direct_writer(scope))
            if not gone.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            sub.close()
        if self.background is not None:
            await self.background()
