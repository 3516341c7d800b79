"""ToolThreadPool: where sync tools run, off the event loop, on daemon threads.

Why not ``concurrent.futures.ThreadPoolExecutor``: its threads are joined at interpreter exit,
so one sync tool that timed out (and cannot be stopped: Python cannot kill a thread) would hold
the process until the function returned. Here every worker thread is a daemon, a timed-out call
is *abandoned* (its slot is given back so the pool keeps its full size), and :meth:`shutdown`
never waits. A thread left idle for ``idle_seconds`` exits, so a desk that is never closed
(or the process-wide pool) keeps no idle threads; the next call starts one again.

The hand-off is kept short because every sync tool call under the async API pays it: the
caller awaits a plain ``asyncio.Future`` that the pool thread completes with one
``loop.call_soon_threadsafe`` (no ``concurrent.futures.Future``, ``wrap_future`` or executor
layers in between, and two lock sections per call on the thread).

Where its CPU goes (``bench/handoff.py``; 2-vCPU VM): with both threads on one CPU, ~30 µs per
call, the pool's Python and the loop's two extra iterations included. With the pool thread on
another CPU (the scheduler's choice on an idle machine) ~150 µs: each call wakes a sleeping
thread on the other CPU twice (the pool thread, then the loop's thread through its self-pipe),
and there each wake-up's syscall alone takes ~16-19 µs (an IPI; 1 µs on one CPU). Neither can
go: the loop's thread must sleep while the tool runs (spinning would burn a shared core), and so
must an idle pool thread. A wake-up sent with the GIL released (a socket per thread) spared
three context switches a call on one CPU but no measurable CPU, so the queue stays.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from types import CoroutineType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # asyncio is imported by the first tool call, not with deskwork
    import asyncio
    import queue  # ... and queue (with heapq) by the first pool

__all__ = ["DEFAULT_TOOL_THREADS", "IDLE_SECONDS", "ToolThreadPool", "default_pool"]

DEFAULT_TOOL_THREADS = 64
"""Default size of a tool pool: threads are started on demand, up to this many at once."""
IDLE_SECONDS = 2.0
"""How long a pool thread waits for a call before it exits (starting one costs ~0.1 ms)."""

_Call = tuple[
    "asyncio.AbstractEventLoop", "asyncio.Future[Any]", Callable[[], Any], contextvars.Context
]


class ToolThreadPool:
    """A pool of daemon threads for sync tool calls.

    Args:
        max_workers: how many sync tool calls run at once (more wait in a queue).
        name: prefix of the threads' names.
        idle_seconds: how long a thread waits for a call before it exits.
    """

    def __init__(
        self,
        max_workers: int = DEFAULT_TOOL_THREADS,
        *,
        name: str = "deskwork-tool",
        idle_seconds: float = IDLE_SECONDS,
    ):
        import queue

        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        if not 0 < idle_seconds <= threading.TIMEOUT_MAX:  # NaN too; a longer wait raises
            raise ValueError(  # in the pool thread, which then never answers its call
                f"idle_seconds must be > 0 and <= {threading.TIMEOUT_MAX}, not {idle_seconds!r}"
            )
        self.max_workers = max_workers
        self.idle_seconds = idle_seconds
        self._name = name
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0  # threads blocked on the queue, ready to take a call
        self._queued = 0  # calls in the queue no thread has taken yet
        self._running: set[asyncio.Future[Any]] = set()
        self._abandoned: set[asyncio.Future[Any]] = set()
        self._closed = False

    def start(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Start ``fn()`` on a pool thread (in a copy of the caller's context); await the
        returned future, of the running loop, for its result or exception.

        Cancelling the future (a timeout, a cancelled caller) does not stop ``fn``: pass it
        to :meth:`abandon` then.

        Raises:
            RuntimeError: the pool is shut down, or no event loop is running.
        """
        import asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the tool pool is shut down (the desk was closed)")
            room = self._threads - len(self._abandoned) < self.max_workers
            if self._queued >= self._waiting and room:
                self._start_thread()  # raises (counting nothing) when no thread can start
            self._queued += 1
            self._queue.put((loop, future, fn, contextvars.copy_context()))
        return future

    def abandon(self, future: asyncio.Future[Any]) -> None:
        """Give up on a call whose future was cancelled: a queued call never starts; a
        running one keeps its thread until it returns, and the pool may start another."""
        with self._lock:
            if future in self._running:
                self._abandoned.add(future)

    @property
    def running_abandoned(self) -> int:
        """Abandoned calls still running (each holds a daemon thread)."""
        with self._lock:
            return len(self._abandoned)

    def shutdown(self) -> None:
        """Stop taking work; idle threads exit. Never waits for running calls."""
        with self._lock:
            self._closed = True
            count = self._threads
        for _ in range(count):
            self._queue.put(None)

    def _start_thread(self) -> None:
        """Start one more thread (under the lock); counted only once it runs."""
        index = self._threads
        thread = threading.Thread(target=self._work, name=f"{self._name}-{index}", daemon=True)
        thread.start()
        self._threads += 1

    def _work(self) -> None:
        import queue

        with self._lock:
            self._waiting += 1
        while True:
            try:
                item = self._queue.get(timeout=self.idle_seconds)
            except queue.Empty:
                if self._retire_idle():
                    return
                continue
            with self._lock:
                self._waiting -= 1
                if item is None:
                    self._threads -= 1
                    return
                self._queued -= 1
                loop, future, fn, context = item
                if future.cancelled():  # abandoned before it started: it never runs
                    self._waiting += 1
                    continue
                self._running.add(future)
            try:
                outcome = (True, context.run(fn))
            except BaseException as exc:  # handed to the awaiting caller
                outcome = (False, exc)
            with self._lock:  # before the wake-up, so the caller's loop finds the GIL free
                self._running.discard(future)
                self._abandoned.discard(future)
                retire = self._threads - len(self._abandoned) > self.max_workers
                if retire:
                    self._threads -= 1  # a replacement took this thread's slot
                else:
                    self._waiting += 1
            if future.done():  # abandoned: nobody awaits it, no wake-up needed
                _drop(*outcome)
            else:
                try:
                    loop.call_soon_threadsafe(_settle, future, *outcome)
                except RuntimeError:  # its loop is closed: nobody awaits it
                    _drop(*outcome)
            if retire:
                return

    def _retire_idle(self) -> bool:
        """Whether a thread that waited ``idle_seconds`` for nothing exits (and is uncounted):
        not when a call was queued meanwhile that counts on it being there to take it."""
        with self._lock:
            if self._queued >= self._waiting:
                return False
            self._waiting -= 1
            self._threads -= 1
            return True


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Complete ``future`` on its loop (unless it was cancelled meanwhile)."""
    if future.done():
        _drop(ok, value)
        return
    if ok:
        future.set_result(value)
    elif isinstance(value, StopIteration):  # a future refuses it (as a coroutine would)
        error = RuntimeError(f"the tool function raised StopIteration: {value}")
        error.__cause__ = value
        future.set_exception(error)
    else:
        future.set_exception(value)


def _drop(ok: bool, value: Any) -> None:
    """Close the coroutine a sync tool returned (an ``async def`` behind a decorator) when its
    call was abandoned (timed out, cancelled): nobody will await it, and left as it is it would
    hold what its arguments hold and warn "coroutine ... was never awaited" when collected."""
    if ok and type(value) is CoroutineType:
        value.close()


_default: ToolThreadPool | None = None
_default_lock = threading.Lock()


def default_pool() -> ToolThreadPool:
    """The process-wide pool for tools run without a desk (``aexecute_tool`` standalone)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ToolThreadPool(DEFAULT_TOOL_THREADS)
        return _default
