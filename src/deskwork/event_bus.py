"""EventBus: in-process publish/subscribe for runtime events.

Handlers subscribe to an exact event type or to ``"*"``. A handler that raises never
breaks the emitter: the failure is recorded as an :class:`EventHandlerError` and can be
read with :meth:`EventBus.get_errors` or awaited with :meth:`EventBus.await_pending`.

A desk's runs hand their events (stored already) to :meth:`EventBus.deliver`; an event
given to :meth:`EventBus.emit` or :meth:`EventBus.aemit` (a custom event of the user's)
first goes to the bus's recorders (:meth:`EventBus.add_recorder`): the desk stores it with
the run it names while that run is running on the desk, and after the run's end once the
desk ended it (``docs/stores.md``).
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from deskwork.core.event import Event
from deskwork.exceptions import EventHandlerError

if TYPE_CHECKING:  # asyncio is imported where it is used, not with deskwork
    import asyncio

__all__ = ["EventBus", "EventHandler"]

EventHandler = Callable[[Event], Any]

MAX_HANDLER_ERRORS = 1000
"""How many handler errors a bus keeps (the most recent): each holds its exception and the
exception's traceback frames, and a served desk's bus lives as long as the process."""


class EventBus:
    """Routes events to handlers; collects handler errors instead of raising them."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[EventHandler]] = {}
        self._lock = threading.Lock()
        self._errors: deque[EventHandlerError] = deque(maxlen=MAX_HANDLER_ERRORS)
        self._pending: set[asyncio.Future[Any]] = set()
        self._recorders: list[Callable[[], EventHandler | None]] = []

    def add_recorder(self, recorder: EventHandler) -> None:
        """Have ``recorder`` see each event given to :meth:`emit` or :meth:`aemit`, before
        the handlers do (not those given to :meth:`deliver`). A recorder that raises fails
        like a handler: the error is collected and the event still delivered.

        ``recorder`` is any callable taking the event. A bound method is held weakly (a
        desk that records what is emitted on a bus shared with others is not kept alive by
        it): it stops recording once its object is gone, so keep a reference to that
        object. Any other callable (a function, a lambda, an object with ``__call__``) is
        held as long as the bus.
        """
        with self._lock:  # (recorders of desks gone are dropped here)
            live = [ref for ref in self._recorders if ref() is not None]
            self._recorders = [*live, _held(recorder)]

    def subscribe(self, event_type: str, handler: EventHandler) -> None:
        """Call ``handler`` for events of ``event_type`` (or every event for ``"*"``)."""
        with self._lock:
            handlers = list(self._handlers.get(str(event_type), ()))
            handlers.append(handler)
            self._handlers[str(event_type)] = handlers

    def unsubscribe(self, event_type: str, handler: EventHandler) -> None:
        """Remove a handler registered with :meth:`subscribe`; unknown handlers are ignored."""
        with self._lock:
            handlers = [h for h in self._handlers.get(str(event_type), ()) if h != handler]
            self._handlers[str(event_type)] = handlers

    def has_subscribers(self, event_type: str) -> bool:
        """Whether any handler would receive an event of this type."""
        return bool(self._handlers.get(event_type) or self._handlers.get("*"))

    def _targets(self, event_type: str) -> list[EventHandler]:
        exact = self._handlers.get(event_type)
        wildcard = self._handlers.get("*")
        if not wildcard:
            return exact or []
        return [*(exact or ()), *wildcard]

    def emit(self, event: Event) -> None:
        """Record ``event`` (see :meth:`add_recorder`), then :meth:`deliver` it."""
        if self._recorders:
            self._record_emitted(event)
        self.deliver(event)

    def deliver(self, event: Event) -> None:
        """Deliver ``event`` in-process, to the handlers only (a desk's runs give theirs here).

        Async handlers (or handlers returning awaitables) are scheduled on the running loop
        when there is one, or run to completion on a temporary loop from sync code.
        """
        if not self._handlers:  # nobody subscribed (the common case of a desk's bus)
            return
        for handler in self._targets(event.type):
            try:
                result = handler(event)
            except Exception as exc:
                self._record(event, exc, handler)
                continue
            if inspect.isawaitable(result):
                self._schedule(event, result, handler)

    async def aemit(self, event: Event) -> None:
        """Record ``event`` (see :meth:`add_recorder`), deliver it and await async handlers
        before returning."""
        if self._recorders:
            self._record_emitted(event)
        for handler in self._targets(event.type):
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                self._record(event, exc, handler)

    def _record_emitted(self, event: Event) -> None:
        for ref in self._recorders:
            recorder = ref()
            if recorder is None:  # its desk is gone
                continue
            try:
                recorder(event)
            except Exception as exc:
                self._record(event, exc, recorder)

    def _schedule(self, event: Event, awaitable: Awaitable[Any], handler: EventHandler) -> None:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                asyncio.run(_await(awaitable))
            except Exception as exc:
                self._record(event, exc, handler)
            return
        future = asyncio.ensure_future(awaitable, loop=loop)
        with self._lock:  # a bus may be shared by threads, each with its own loop
            self._pending.add(future)

        def _done(fut: asyncio.Future[Any]) -> None:
            with self._lock:
                self._pending.discard(fut)
            if not fut.cancelled() and fut.exception() is not None:
                exc = fut.exception()
                assert exc is not None
                self._record(event, exc, handler)

        future.add_done_callback(_done)

    def _pending_on(self, loop: asyncio.AbstractEventLoop) -> list[asyncio.Future[Any]]:
        with self._lock:
            return [f for f in self._pending if f.get_loop() is loop]

    def _record(self, event: Event, exc: BaseException, handler: Any) -> None:
        with self._lock:
            self._errors.append(EventHandlerError(event.type, exc))
        _log_failure(event, exc, handler)

    def record_error(self, event: Event, exc: BaseException, handler: Any = None) -> None:
        """Record a failure of a listener that receives ``event`` outside the bus.

        The desk uses it for ``on_event`` listeners, so they fail like handlers do: the
        error is collected and logged, the run goes on.
        """
        self._record(event, exc, handler if handler is not None else "on_event")

    def get_errors(self) -> list[EventHandlerError]:
        """Errors raised by handlers (and recorders) so far, oldest first: the last
        :data:`MAX_HANDLER_ERRORS` (1,000); older ones are dropped, and
        :meth:`clear_errors` forgets them all."""
        with self._lock:
            return list(self._errors)

    def clear_errors(self) -> None:
        """Forget recorded handler errors."""
        with self._lock:
            self._errors.clear()

    async def await_pending(self, *, raise_on_error: bool = False) -> list[EventHandlerError]:
        """Wait for scheduled async handlers; return (or raise the first of) the errors.

        Only handlers scheduled on the running loop are awaited (a bus shared by threads
        holds handlers of other loops, which those loops finish).
        """
        import asyncio

        loop = asyncio.get_running_loop()
        while pending := self._pending_on(loop):
            await asyncio.gather(*pending, return_exceptions=True)
        errors = self.get_errors()
        if raise_on_error and errors:
            raise errors[0]
        return errors


def _held(recorder: EventHandler) -> Callable[[], EventHandler | None]:
    """How the bus holds ``recorder``: weakly if it is a bound method (of an object that
    can be referenced weakly), else strongly; calling it gives the recorder, ``None`` once
    a weakly held one's object is gone."""
    if inspect.ismethod(recorder):
        try:
            return weakref.WeakMethod(recorder)
        except TypeError:  # its object takes no weak reference (__slots__)
            pass
    return lambda: recorder


LOGGER_NAME = "deskwork.events"
"""The structured logger that records failing event handlers (one JSON line each)."""


def _handler_name(handler: Any) -> str:
    if isinstance(handler, str):
        return handler
    name = getattr(handler, "__qualname__", None) or getattr(handler, "__name__", None)
    if name is None:  # a callable object or a functools.partial
        inner = getattr(handler, "func", None)
        name = getattr(inner, "__qualname__", None) or type(handler).__qualname__
    module = getattr(handler, "__module__", None)
    return f"{module}.{name}" if module else str(name)


def _log_failure(event: Event, exc: BaseException, handler: Any) -> None:
    """Never raises: logging a handler's failure must not break the emitter either."""
    try:
        from deskwork.logging import get_logger

        get_logger(LOGGER_NAME).error(
            "event handler failed",
            event_type=event.type,
            event_id=event.event_id,
            run_id=event.run_id,
            handler=_handler_name(handler),
            error_type=type(exc).__name__,
            error=str(exc)[:2000],
        )
    except Exception:  # a broken log handler: the error is still recorded
        pass


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
