"""Small asyncio helpers shared by every concurrent part of deskwork.

asyncio itself is imported where it is used (on the first run), not with deskwork: see
tests/core/test_lazy_imports.py.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["gather_or_cancel"]

T = TypeVar("T")


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
