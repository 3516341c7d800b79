"""ToolThreadPool: where sync tools run, off the event loop, on daemon threads.

Why not ``concurrent.futures.ThreadPoolExecutor``: its threads are joined at interpreter exit,
so one sync tool that timed out (and cannot be stopped: Python cannot kill a thread) would hold
the process until the function returned. Here every worker thread is a daemon, a timed-out call
is *abandoned* (its slot is given back so the pool keeps its full size), and :meth:`shutdown`
never waits.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

__all__ = ["DEFAULT_TOOL_THREADS", "ToolThreadPool", "default_pool"]

DEFAULT_TOOL_THREADS = 64
"""Default size of a tool pool: threads are started on demand, up to this many at once."""

_Item = tuple[Future[Any], Callable[[], Any], contextvars.Context]


class ToolThreadPool:
    """A pool of daemon threads for sync tool calls.

    Args:
        max_workers: how many sync tool calls run at once (more wait in a queue).
        name: prefix of the threads' names.
    """

    def __init__(self, max_workers: int = DEFAULT_TOOL_THREADS, *, name: str = "deskwork-tool"):
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self.max_workers = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0  # threads blocked on the queue, ready to take an item
        self._queued = 0  # items in the queue no thread has taken yet
        self._abandoned: set[Future[Any]] = set()
        self._closed = False

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        """Run ``fn()`` on a pool thread (in a copy of the caller's context)."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the tool pool is shut down (the desk was closed)")
            self._queued += 1
            room = self._threads - len(self._abandoned) < self.max_workers
            if self._queued > self._waiting and room:
                self._threads += 1
                self._start_thread()
            self._queue.put((future, fn, contextvars.copy_context()))
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Give up on ``future`` (timed out or cancelled): a queued call never starts; a
        running one keeps its thread until it returns, and the pool may start another."""
        if future.cancel():
            return
        with self._lock:
            if not future.done():
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
        index = self._threads
        thread = threading.Thread(target=self._work, name=f"{self._name}-{index}", daemon=True)
        thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._waiting += 1
            item = self._queue.get()
            with self._lock:
                self._waiting -= 1
                if item is None:
                    self._threads -= 1
                    return
                self._queued -= 1
            future, fn, context = item
            if future.set_running_or_notify_cancel():
                try:
                    result = context.run(fn)
                except BaseException as exc:  # handed to the awaiting caller
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            with self._lock:
                self._abandoned.discard(future)
                if self._threads - len(self._abandoned) > self.max_workers:
                    self._threads -= 1  # a replacement took this thread's slot
                    return


_default: ToolThreadPool | None = None
_default_lock = threading.Lock()


def default_pool() -> ToolThreadPool:
    """The process-wide pool for tools run without a desk (``aexecute_tool`` standalone)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ToolThreadPool(DEFAULT_TOOL_THREADS)
        return _default
