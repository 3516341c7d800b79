"""The one bridge from sync wrappers to the async core.

Each thread that calls a sync API (``desk.run``, ``worker.run``, ...) drives a long-lived event
loop of its own. While such a call runs, the bridge knows whether the loop is doing anything
but that one call (:func:`sync_call_alone`): if not, nothing else waits on the loop, and a sync
tool may run on this thread (:func:`call_off_loop`) instead of being handed to a pool thread.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from deskwork.exceptions import EventLoopRunningError

if TYPE_CHECKING:  # asyncio is imported by the first sync call, not with deskwork
    import asyncio
    from collections import deque

__all__ = ["call_off_loop", "on_shutdown", "run_sync", "sync_call_alone"]

T = TypeVar("T")
_local = threading.local()
_loops: list[asyncio.AbstractEventLoop] = []
_shutdown_hooks: list[Callable[[], Awaitable[None]]] = []
_READY_LIMIT = 256
"""Ready callbacks a sync call runs before it hands over to the full event loop."""


class _Bridge:
    """One sync-bridge loop and what runs on it: the sync call's task and the live tasks."""

    __slots__ = ("call", "live", "loop", "task_type")

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.task_type = asyncio.Task  # looked up once: a from-import of asyncio costs ~1 us
        self.call: asyncio.Task[Any] | None = None
        self.live = 0
        self.loop.set_task_factory(self._task)

    def _task(self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = self.task_type(coro, loop=loop, **kwargs)
        self.live += 1
        task.add_done_callback(self._done)
        return task

    def _done(self, _task: asyncio.Task[Any]) -> None:
        self.live -= 1

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        task = self.loop.create_task(coro)
        self.call = task
        try:
            if self._run_ready(task):
                return task.result()
            return self.loop.run_until_complete(task)
        except BaseException:
            if not task.done():  # a KeyboardInterrupt or SystemExit left the loop mid-call
                self._abandon(task)
            raise
        finally:
            self.call = None

    def _abandon(self, task: asyncio.Task[Any]) -> None:
        """Cancel the interrupted call and let it unwind (as ``asyncio.run`` does), so that
        what it left on the loop (a step waking it with the exception that escaped) does not
        run, or raise again, in this thread's next sync call. A call that cannot be unwound
        (interrupted again) takes the loop with it: the next call gets a new one."""
        task.cancel()
        with contextlib.suppress(BaseException):
            self.loop.run_until_complete(task)
        if not task.done():
            self.loop.close()  # its ready callbacks go with it; _bridge() skips closed loops

    def _run_ready(self, task: asyncio.Task[Any]) -> bool:
        """Run the loop's ready callbacks (the task's steps first), as ``run_forever`` would,
        without its per-call set-up and I/O polls; whether ``task`` ended and nothing is left.

        A sync run whose steps never wait on I/O, a timer or a thread (a tool run on this
        thread, an in-memory store) ends here, without the two loop iterations and their
        polls (the bridge's cost per call: 29.5 -> 18.8 us CPU); any other, or one that
        leaves a timer behind, goes on in ``run_until_complete`` from where it stopped (the
        same task, context and current task). Only for asyncio's own loop (its ready queue and
        timer heap), not in debug mode, and for a bounded number of callbacks (a callback
        that re-schedules itself waiting for I/O must not spin here).
        """
        loop = self.loop
        ready: deque[asyncio.Handle] | None = getattr(loop, "_ready", None)
        timers: list[asyncio.TimerHandle] | None = getattr(loop, "_scheduled", None)
        if not hasattr(ready, "popleft") or timers is None or loop.get_debug():
            return False
        assert ready is not None
        events = sys.modules["asyncio.events"]
        hooks = sys.get_asyncgen_hooks()
        # what run_forever sets: the running loop (is_running() true), async generators
        # finalized by the loop
        loop._thread_id = threading.get_ident()  # type: ignore[attr-defined]
        events._set_running_loop(loop)
        sys.set_asyncgen_hooks(
            firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
            finalizer=loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
        )
        try:
            for _ in range(_READY_LIMIT):
                if not ready:
                    break
                handle = ready.popleft()
                if not handle.cancelled():
                    handle._run()
        finally:
            sys.set_asyncgen_hooks(*hooks)
            events._set_running_loop(None)
            loop._thread_id = None  # type: ignore[attr-defined]
        # a timer left (even a cancelled one: only a loop iteration drops it) goes to the loop
        return task.done() and not ready and not timers


def _bridge() -> _Bridge:
    """This thread's idle bridge: the first one not running (a nested sync call made by a
    sync tool that runs on this thread gets a second one)."""
    bridges: list[_Bridge] | None = getattr(_local, "bridges", None)
    if bridges is None:
        bridges = _local.bridges = []
    for bridge in bridges:
        if not bridge.loop.is_running() and not bridge.loop.is_closed():
            return bridge
    # One long-lived loop per thread (and nesting depth): clients that cache connections per
    # loop (LiteLLM, httpx) keep working across successive sync calls. Driving it with
    # run_until_complete (not asyncio.Runner.run) avoids re-installing a SIGINT handler on
    # every call, which cost ~100 µs per run.
    bridges[:] = [b for b in bridges if not b.loop.is_closed()]
    bridge = _Bridge()
    bridges.append(bridge)
    _loops.append(bridge.loop)
    return bridge


def run_sync(coro: Coroutine[Any, Any, T], *, api: str = "run") -> T:
    """Run ``coro`` to completion from sync code.

    Raises:
        EventLoopRunningError: called while an event loop is running in this thread.
    """
    events = sys.modules.get("asyncio.events")  # not imported yet: no loop can be running
    if events is not None and events._get_running_loop() is not None:
        coro.close()
        raise EventLoopRunningError(
            f"{api}() cannot be called from a running event loop; use a{api}() instead"
        )
    return _bridge().run(coro)


def sync_call_alone() -> bool:
    """Whether the running loop is a sync bridge's and has no task but its sync call's (the
    current one): no other run, tool call or handler is waiting on the loop.
    """
    bridges: list[_Bridge] = getattr(_local, "bridges", [])
    if not bridges:
        return False
    events = sys.modules["asyncio.events"]  # imported by the bridge (a from-import costs ~1 us)
    for bridge in bridges:
        if bridge.call is not None and bridge.loop is events._get_running_loop():
            return bridge.live == 1
    return False


def call_off_loop(fn: Callable[[], T]) -> T:
    """``fn()`` on this thread as a pool thread would run it: in a copy of the context, with
    no running event loop (so it may make sync calls, ``asyncio.run``, of its own).

    Only when :func:`sync_call_alone` is true, or for a tool declared ``blocking=False``:
    the loop is blocked until ``fn`` returns.
    """
    events = sys.modules["asyncio.events"]  # imported by the bridge (a from-import costs ~1 us)
    loop = events._get_running_loop()
    events._set_running_loop(None)
    try:
        return contextvars.copy_context().run(fn)
    finally:
        events._set_running_loop(loop)


def on_shutdown(hook: Callable[[], Awaitable[None]]) -> None:
    """Run ``hook()`` on each sync-bridge loop before it closes at interpreter exit.

    Lets libraries with loop-bound background tasks (LiteLLM) stop them cleanly.
    """
    if hook not in _shutdown_hooks:
        _shutdown_hooks.append(hook)


@atexit.register
def _close_runners() -> None:
    for loop in _loops:
        with contextlib.suppress(Exception):  # best effort at interpreter exit
            for hook in _shutdown_hooks:
                loop.run_until_complete(_await(hook()))
            _cancel_pending(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and drain tasks left on ``loop`` (as ``asyncio.run`` does before closing)."""
    import asyncio

    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable
