"""Fan-out of the desk's events to the server's live streams, keyed by run id.

The desk persists every event in the run store and then delivers it on its event bus, in
that order, so a stream that subscribes here *before* reading the stored events sees every
event at least once: the stored ones, then the live ones (duplicates are dropped by id).

Fan-out is the hot path of a run followed by many clients, so an event is serialized once
for all of them (:class:`Outgoing`: its JSON, its SSE frame and the HTTP chunk that streams
write to their transports), handed over with one call when it comes from another thread,
and delivered to every stream in one loop: a waiting stream that can write without
awaiting (its ``take_now``, see :meth:`Subscription.wait`) writes the event right there,
the others are woken by resolving one future (no task and no timer per wait: one timer, the
hub's tick, wakes the idle streams to poll the store).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from contextvars import ContextVar

from deskwork._logs import get_stdlib_logger
from deskwork.core.event import Event
from deskwork.event_bus import EventBus
from deskwork.serve._direct import chunk

__all__ = ["EventHub", "Outgoing", "Subscription", "TakeNow"]

_log = get_stdlib_logger("deskwork.serve")

TakeNow = Callable[["Outgoing"], bool]
"""Handles an event at once, on the hub's call (``False``: it could not, nothing done)."""

_current_run: ContextVar[str | None] = ContextVar("deskwork_serve_current_run", default=None)


class Outgoing:
    """An event on its way to the streams, with its JSON made once for all of them."""

    __slots__ = ("_chunk", "_frame", "_json", "_position", "_tokens", "event")

    def __init__(self, event: Event) -> None:
        self.event = event
        self._json: bytes | None = None
        self._position = -1
        self._frame = b""
        self._chunk = b""
        self._tokens: dict[str, Outgoing] | None = None

    def with_token(self, text: str) -> Outgoing:
        """This ``stream.token`` event carrying ``text`` instead (made once per text, so
        the streams that rewrite it alike share its JSON)."""
        if text == self.event.payload.get("token"):
            return self
        if self._tokens is None:
            self._tokens = {}
        found = self._tokens.get(text)
        if found is None:
            payload = {**self.event.payload, "token": text}
            found = self._tokens[text] = Outgoing(
                self.event.model_copy(update={"payload": payload})
            )
        return found

    @property
    def json(self) -> bytes:
        """``event.model_dump(mode="json")`` as compact JSON (made on first use)."""
        if self._json is None:
            data = self.event.model_dump(mode="json")
            self._json = json.dumps(data, separators=(",", ":"), default=str).encode()
        return self._json

    def frame(self, position: int) -> bytes:
        """The SSE frame of the event at ``position``: ``id:`` and ``data:`` with the
        position first, then the event's fields."""
        if position != self._position:  # every stream of a run asks for the same position
            head = b'id: %d\ndata: {"position":%d,' % (position, position)
            self._frame = head + self.json[1:] + b"\n\n"
            self._chunk = b""
            self._position = position
        return self._frame

    def chunk(self, position: int) -> bytes:
        """The frame at ``position`` as one chunk of a chunked HTTP/1.1 body, as streams
        write it to their transports (:mod:`deskwork.serve._direct`): made once for all."""
        frame = self.frame(position)
        if not self._chunk:
            self._chunk = chunk(frame)
        return self._chunk


class Subscription:
    """The live events of one run (or of every run) for one client, on the server's loop."""

    def __init__(self, hub: EventHub, run_id: str | None) -> None:
        self.hub = hub
        self.run_id = run_id
        self._ready: deque[Outgoing] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._take_now: TakeNow | None = None
        self._fed = False
        self.closed = False
        """Whether the stream's client went away (or the stream ended)."""

    def put(self, item: Outgoing) -> None:
        """Hand ``item`` to the waiting stream's ``take_now``, else queue it and wake the
        stream if it waits (call on the server's loop)."""
        self._fed = True
        take_now = self._take_now
        if take_now is not None:
            try:
                if take_now(item):
                    return
            except Exception:  # the stream's state is unknown: end it (clients resume)
                _log.exception("event stream failed to write an event; closing it")
                self.close()
                return
            self._take_now = None  # from here on, in order: through the queue
        self._ready.append(item)
        self.wake()

    def idle_tick(self) -> bool:
        """The hub's tick: wake the stream if no event came since the last tick; whether
        it still waits (it needs the next tick)."""
        if self._fed:
            self._fed = False
            return self._waiter is not None
        self.wake()
        return False

    def wake(self) -> None:
        """End the stream's :meth:`wait` (if it waits)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def ready(self) -> bool:
        """Whether events are waiting to be taken."""
        return bool(self._ready)

    def take(self) -> list[Outgoing]:
        """Every event already waiting, without waiting (they go out in one write)."""
        ready = list(self._ready)
        self._ready.clear()
        return ready

    async def wait(self, take_now: TakeNow | None = None) -> bool:
        """Wait until an event is waiting (``True``), a tick of the hub finds the stream
        idle or the subscription closes (``False``; a tick: between one and two ticks
        without events).

        While it waits, each event goes to ``take_now`` first, in the hub's delivery: what
        it handles is not queued and does not wake the stream. The first event it refuses
        is queued, as are the ones after it (they keep their order), and ends the wait."""
        if not self._ready and not self.closed:
            waiter = self._waiter = self.hub.loop.create_future()
            self._take_now = take_now
            self.hub.tick_soon()
            try:
                await waiter
            finally:
                self._waiter = None
                self._take_now = None
        return bool(self._ready)

    def close(self) -> None:
        """Stop receiving events (a waiting :meth:`wait` returns)."""
        self.closed = True
        self.hub.unsubscribe(self)
        self.wake()


def _deliver(targets: list[Subscription], item: Outgoing) -> None:
    for sub in targets:
        sub.put(item)


class EventHub:
    """Subscribes once to the desk's bus and hands each event to the streams that want it."""

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop, tick: float) -> None:
        self._bus = bus
        self.loop = loop
        self.tick = tick
        """Seconds between the wake-ups of waiting streams (they poll the store then)."""
        self._ticker: asyncio.TimerHandle | None = None
        self._thread = threading.get_ident()
        self._by_run: dict[str | None, set[Subscription]] = defaultdict(set)
        self._lock = threading.Lock()
        bus.subscribe("*", self._on_event)

    def close(self) -> None:
        """Detach from the bus."""
        self._bus.unsubscribe("*", self._on_event)
        if self._ticker is not None:
            self._ticker.cancel()

    def tick_soon(self) -> None:
        """Make sure a tick is due: one timer for every waiting stream, not one per wait."""
        if self._ticker is None:
            self._ticker = self.loop.call_later(self.tick, self._on_tick)

    def _on_tick(self) -> None:
        self._ticker = None
        with self._lock:
            subs = [sub for group in self._by_run.values() for sub in group]
        waiting = [sub.idle_tick() for sub in subs]
        if any(waiting):  # streams fed without waking: no new wait re-arms the tick
            self.tick_soon()

    def subscribe(self, run_id: str | None) -> Subscription:
        """A subscription to ``run_id``'s events (every run's when ``None``)."""
        sub = Subscription(self, run_id)
        with self._lock:
            self._by_run[run_id].add(sub)
        return sub

    def subscribers(self, run_id: str | None) -> int:
        """How many streams follow ``run_id`` (every run when ``None``)."""
        with self._lock:
            return len(self._by_run.get(run_id, ()))

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._by_run.get(sub.run_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._by_run[sub.run_id]

    def _on_event(self, event: Event) -> None:
        with self._lock:
            targets = [*self._by_run.get(event.run_id, ()), *self._by_run.get(None, ())]
        if not targets:
            return
        if threading.get_ident() == self._thread:
            # after the callbacks already due (a store's commit of the events added in this
            # turn of the loop): a stream may write the event to its client in the delivery,
            # and a client must only see events the store keeps (it resumes by position)
            self.loop.call_soon(_deliver, targets, Outgoing(event))
        else:  # a run on another thread's loop: hand the event over to the server's loop
            self.loop.call_soon_threadsafe(_deliver, targets, Outgoing(event))
