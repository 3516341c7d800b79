"""Every rate limiter has the same surface once closed (the seed's section 17).

is_closed, close() twice, acquire() refused (a waiting one too), async with refused, and a slot
held before close() still released — for each limiter class the module ships.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable

import pytest

from deskwork.graph.core import rate_limiting
from deskwork.graph.core.rate_limiting import (
    PerTenantRateLimiter,
    RateLimiter,
    SemaphoreRateLimiter,
)


def _per_tenant() -> RateLimiter:
    limiter = PerTenantRateLimiter()
    limiter.set_tenant("t")  # the test's context (and tasks it starts) use tenant "t"
    return limiter


FACTORIES: dict[type[RateLimiter], Callable[[], RateLimiter]] = {
    SemaphoreRateLimiter: SemaphoreRateLimiter,
    PerTenantRateLimiter: _per_tenant,
}
LIMITERS = pytest.mark.parametrize("make", list(FACTORIES.values()), ids=lambda f: f.__name__)


def test_every_shipped_limiter_is_covered() -> None:
    shipped = {
        cls
        for _, cls in inspect.getmembers(rate_limiting, inspect.isclass)
        if issubclass(cls, RateLimiter) and not inspect.isabstract(cls)
    }
    assert shipped == set(FACTORIES)


@LIMITERS
async def test_close_sets_is_closed_and_is_idempotent(make: Callable[[], RateLimiter]) -> None:
    limiter = make()
    assert limiter.is_closed is False
    await limiter.close()
    await limiter.close()
    assert limiter.is_closed is True
    assert "closed" in repr(limiter)


@LIMITERS
async def test_leaving_async_with_closes(make: Callable[[], RateLimiter]) -> None:
    async with make() as limiter:
        await limiter.acquire()
        await limiter.release()
    assert limiter.is_closed
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        await limiter.acquire()
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        async with limiter:
            pass


@LIMITERS
async def test_a_held_slot_is_released_after_close_and_waiters_are_refused(
    make: Callable[[], RateLimiter],
) -> None:
    limiter = make()  # one slot
    await limiter.acquire()
    waiter = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    await limiter.close()
    await limiter.release()
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        await waiter


async def test_a_custom_limiter_gets_the_same_surface() -> None:
    class Counting(RateLimiter):
        async def acquire(self) -> None:
            self._check_open()

    limiter = Counting()
    assert not limiter.is_closed
    async with limiter:
        await limiter.acquire()
    assert limiter.is_closed
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        await limiter.acquire()
    with pytest.raises(RuntimeError, match="rate limiter is closed"):
        async with limiter:
            pass
