"""The one bridge from sync wrappers to the async core."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from deskwork.exceptions import EventLoopRunningError

__all__ = ["on_shutdown", "run_sync"]

T = TypeVar("T")
_local = threading.local()
_loops: list[asyncio.AbstractEventLoop] = []
_shutdown_hooks: list[Callable[[], Awaitable[None]]] = []


def _loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        # One long-lived loop per thread: clients that cache connections per loop
        # (LiteLLM, httpx) keep working across successive sync calls. Driving it with
        # run_until_complete (not asyncio.Runner.run) avoids re-installing a SIGINT
        # handler on every call, which cost ~100 µs per run.
        loop = asyncio.new_event_loop()
        _local.loop = loop
        _loops.append(loop)
    return loop


def run_sync(coro: Coroutine[Any, Any, T], *, api: str = "run") -> T:
    """Run ``coro`` to completion from sync code.

    Raises:
        EventLoopRunningError: called while an event loop is running in this thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop running: run below, outside this handler (errors are not chained to it)
    else:
        coro.close()
        raise EventLoopRunningError(
            f"{api}() cannot be called from a running event loop; use a{api}() instead"
        )
    return _loop().run_until_complete(coro)


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
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable
