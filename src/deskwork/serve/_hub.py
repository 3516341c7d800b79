"""Fan-out of the desk's events to the server's live streams, keyed by run id.

The desk persists every event in the run store and then delivers it on its event bus, in
that order, so a stream that subscribes here *before* reading the stored events sees every
event at least once: the stored ones, then the live ones (duplicates are dropped by id).
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from contextvars import ContextVar

from deskwork.core.event import Event, EventType
from deskwork.event_bus import EventBus

__all__ = ["EventHub", "Subscription"]

_current_run: ContextVar[str | None] = ContextVar("deskwork_serve_current_run", default=None)
_STARTS = (EventType.RUN_STARTED, EventType.RUN_RESUMED)
_ENDS = (EventType.RUN_COMPLETED, EventType.RUN_FAILED, EventType.RUN_PAUSED)


class Subscription:
    """The live events of one run (or of every run) for one client."""

    def __init__(self, hub: EventHub, run_id: str | None) -> None:
        self.hub = hub
        self.run_id = run_id
        self.queue: asyncio.Queue[Event] = asyncio.Queue()

    async def get(self, timeout: float) -> Event | None:
        """The next event, or ``None`` after ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None

    def drain(self, limit: int) -> list[Event]:
        """The events already waiting (at most ``limit``), without waiting."""
        ready: list[Event] = []
        while len(ready) < limit and not self.queue.empty():
            ready.append(self.queue.get_nowait())
        return ready

    def close(self) -> None:
        """Stop receiving events."""
        self.hub.unsubscribe(self)


class EventHub:
    """Subscribes once to the desk's bus and hands each event to the streams that want it."""

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop) -> None:
        self._bus = bus
        self._loop = loop
        self._thread = threading.get_ident()
        self._by_run: dict[str | None, set[Subscription]] = defaultdict(set)
        self._lock = threading.Lock()
        self.parents: dict[str, str] = {}
        """Child run id -> parent run id, for runs started inside a run while serving."""
        self.children: dict[str, list[str]] = defaultdict(list)
        bus.subscribe("*", self._on_event)

    def close(self) -> None:
        """Detach from the bus."""
        self._bus.unsubscribe("*", self._on_event)

    def subscribe(self, run_id: str | None) -> Subscription:
        """A subscription to ``run_id``'s events (every run's when ``None``)."""
        sub = Subscription(self, run_id)
        with self._lock:
            self._by_run[run_id].add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._by_run.get(sub.run_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._by_run[sub.run_id]

    def _link(self, event: Event) -> None:
        """Follow which run is current in the emitting context (handlers run in it), so a
        run started inside another one is linked to it."""
        if event.type in _STARTS:
            parent = _current_run.get()
            if parent is not None and parent != event.run_id:
                with self._lock:
                    if event.run_id not in self.parents:
                        self.parents[event.run_id] = parent
                        self.children[parent].append(event.run_id)
            _current_run.set(event.run_id)
        elif event.type in _ENDS and _current_run.get() == event.run_id:
            _current_run.set(self.parents.get(event.run_id))

    def _on_event(self, event: Event) -> None:
        self._link(event)
        with self._lock:
            targets = [*self._by_run.get(event.run_id, ()), *self._by_run.get(None, ())]
        if not targets:
            return
        if threading.get_ident() == self._thread:
            for sub in targets:
                sub.queue.put_nowait(event)
        else:  # a run on another thread's loop: hand the event over to the server's loop
            for sub in targets:
                self._loop.call_soon_threadsafe(sub.queue.put_nowait, event)
