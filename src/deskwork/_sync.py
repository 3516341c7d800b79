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
_runners: list[asyncio.Runner] = []
_shutdown_hooks: list[Callable[[], Awaitable[None]]] = []


def _runner() -> asyncio.Runner:
    runner: asyncio.Runner | None = getattr(_local, "runner", None)
    if runner is None:
        # One long-lived loop per thread: clients that cache connections per loop
        # (LiteLLM, httpx) keep working across successive sync calls.
        runner = asyncio.Runner()
        _local.runner = runner
        _runners.append(runner)
    return runner


def run_sync(coro: Coroutine[Any, Any, T], *, api: str = "run") -> T:
    """Run ``coro`` to completion from sync code.

    Raises:
        EventLoopRunningError: called while an event loop is running in this thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _runner().run(coro)
    coro.close()
    raise EventLoopRunningError(
        f"{api}() cannot be called from a running event loop; use a{api}() instead"
    )


def on_shutdown(hook: Callable[[], Awaitable[None]]) -> None:
    """Run ``hook()`` on each sync-bridge loop before it closes at interpreter exit.

    Lets libraries with loop-bound background tasks (LiteLLM) stop them cleanly.
    """
    if hook not in _shutdown_hooks:
        _shutdown_hooks.append(hook)


@atexit.register
def _close_runners() -> None:
    for runner in _runners:
        with contextlib.suppress(Exception):  # best effort at interpreter exit
            for hook in _shutdown_hooks:
                runner.run(_await(hook()))
            runner.close()


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable
