"""Small asyncio helpers shared by every concurrent part of deskwork.

asyncio itself is imported where it is used (on the first run), not with deskwork: see
tests/core/test_lazy_imports.py.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["gather_or_cancel", "run_events", "task_cancelling"]

T = TypeVar("T")
E = TypeVar("E")


async def gather_or_cancel(*awaitables: Awaitable[T]) -> list[T]:
    """Await all, in order; if one raises, cancel and drain the others, then re-raise.

    Plain ``asyncio.gather`` leaves the siblings of a failed awaitable running (still
    calling models and emitting events into a run that has already failed).
    """
    import asyncio

    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def task_cancelling() -> bool:
    """Whether the running task itself is being cancelled (``Task.cancelling()``), rather
    than a ``CancelledError`` coming out of something it awaited (a future or a request that
    someone else cancelled), which is that awaited work's failure, not a stop of the task."""
    import asyncio

    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


async def run_events(
    start: Callable[[Callable[[E], None]], Coroutine[Any, Any, object]],
) -> AsyncGenerator[E, None]:
    """The events of a run as it emits them: ``start(listener)`` starts the run with
    ``listener`` as its ``on_event``; the iteration ends when the run does (its exception,
    if any, raised here).

    A consumer that stops early (``break`` then ``aclose()``, or its own cancellation)
    cancels the run, which ends failed ("run cancelled"), instead of leaving it running
    unobserved, still calling models.
    """
    import asyncio

    queue: asyncio.Queue[E | None] = asyncio.Queue()
    task = asyncio.get_running_loop().create_task(start(queue.put_nowait))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        await task
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
