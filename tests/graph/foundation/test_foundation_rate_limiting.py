"""deskwork.graph.core.rate_limiting: the semaphore limiter and the per-tenant limiter."""

from __future__ import annotations

import asyncio
import time

import pytest

from deskwork.graph.core.rate_limiting import (
    PerTenantRateLimiter,
    RateLimiter,
    SemaphoreRateLimiter,
)


async def _peak_concurrency(limiter: RateLimiter, calls: int, hold: float = 0.01) -> int:
    active = peak = 0

    async def call() -> None:
        nonlocal active, peak
        await limiter.acquire()
        try:
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(hold)
            active -= 1
        finally:
            await limiter.release()

    await asyncio.gather(*(call() for _ in range(calls)))
    return peak


class TestRateLimiterABC:
    async def test_release_defaults_to_a_no_op_and_async_with_closes(self) -> None:
        class Counting(RateLimiter):
            acquired = 0

            async def acquire(self) -> None:
                self.acquired += 1

        limiter = Counting()
        async with limiter as entered:
            assert entered is limiter
            await limiter.acquire()
            await limiter.release()
        assert limiter.acquired == 1
        assert limiter.is_closed

    def test_acquire_is_abstract(self) -> None:
        with pytest.raises(TypeError):
            RateLimiter()  # type: ignore[abstract]


class TestSemaphoreRateLimiter:
    def test_defaults(self) -> None:
        limiter = SemaphoreRateLimiter()
        assert (limiter.max_concurrency, limiter.delay_seconds) == (1, 0.0)

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"max_concurrency": 0}, "max_concurrency"),
            ({"max_concurrency": True}, "max_concurrency"),
            ({"delay_seconds": -0.1}, "delay_seconds"),
            ({"delay_seconds": float("nan")}, "delay_seconds"),
        ],
    )
    def test_rejects_bad_arguments(self, kwargs: dict[str, float], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            SemaphoreRateLimiter(**kwargs)  # type: ignore[arg-type]

    @pytest.mark.parametrize("limit", [1, 3])
    async def test_bounds_concurrency(self, limit: int) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=limit)
        assert await _peak_concurrency(limiter, calls=8) == limit
        assert limiter.in_use == 0

    async def test_delay_spaces_calls(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=1, delay_seconds=0.02)
        start = time.monotonic()
        await _peak_concurrency(limiter, calls=3, hold=0)
        assert time.monotonic() - start >= 0.06

    async def test_cancelled_delay_gives_the_slot_back(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=1, delay_seconds=10)
        task = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.01)
        assert limiter.in_use == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert limiter.in_use == 0

    async def test_release_without_acquire_is_an_error(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=2)
        with pytest.raises(RuntimeError, match="without a matching acquire"):
            await limiter.release()
        assert await _peak_concurrency(limiter, calls=6) == 2

    async def test_closed_limiter_refuses_acquire_but_allows_release(self) -> None:
        limiter = SemaphoreRateLimiter()
        await limiter.acquire()
        async with limiter:
            pass
        assert limiter.is_closed
        with pytest.raises(RuntimeError, match="closed"):
            await limiter.acquire()
        await limiter.release()
        assert "closed" in repr(limiter)

    async def test_waiters_are_refused_when_the_limiter_closes(self) -> None:
        limiter = SemaphoreRateLimiter()
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.01)
        await limiter.close()
        await limiter.release()
        with pytest.raises(RuntimeError, match="closed"):
            await waiter
        assert limiter.in_use == 0


class TestPerTenantRateLimiter:
    def test_defaults_and_validation(self) -> None:
        limiter = PerTenantRateLimiter()
        assert limiter.max_tenants == 10_000
        with pytest.raises(ValueError, match="max_tenants"):
            PerTenantRateLimiter(max_tenants=0)
        with pytest.raises(ValueError, match="max_concurrency"):
            PerTenantRateLimiter(max_concurrency=0)
        with pytest.raises(ValueError, match="tenant_id"):
            limiter.set_tenant("")

    async def test_acquire_requires_a_tenant(self) -> None:
        limiter = PerTenantRateLimiter()
        with pytest.raises(RuntimeError, match="set_tenant"):
            await limiter.acquire()
        with pytest.raises(RuntimeError, match="set_tenant"):
            await limiter.release()

    async def test_tenants_are_isolated(self) -> None:
        limiter = PerTenantRateLimiter(max_concurrency=1)
        order: list[str] = []

        async def request(tenant: str, hold: float) -> None:
            limiter.set_tenant(tenant)
            await limiter.acquire()
            try:
                order.append(f"{tenant}+")
                await asyncio.sleep(hold)
                order.append(f"{tenant}-")
            finally:
                await limiter.release()

        # tenant a holds its only slot for a while; b is not blocked by it
        await asyncio.gather(request("a", 0.05), request("b", 0.0))
        assert order.index("b-") < order.index("a-")

    async def test_same_tenant_is_limited(self) -> None:
        limiter = PerTenantRateLimiter(max_concurrency=2)

        async def with_tenant() -> int:
            limiter.set_tenant("t")
            return await _peak_concurrency(limiter, calls=6)

        assert await asyncio.create_task(with_tenant()) == 2

    async def test_tenant_is_per_context(self) -> None:
        limiter = PerTenantRateLimiter()
        other = PerTenantRateLimiter()

        async def set_and_read(tenant: str) -> str | None:
            limiter.set_tenant(tenant)
            await asyncio.sleep(0)
            return limiter.current_tenant

        assert list(await asyncio.gather(set_and_read("x"), set_and_read("y"))) == ["x", "y"]
        limiter.set_tenant("z")
        assert other.current_tenant is None

    async def test_lru_eviction_keeps_recent_and_busy_tenants(self) -> None:
        limiter = PerTenantRateLimiter(max_tenants=2)

        async def touch(tenant: str) -> None:
            limiter.set_tenant(tenant)
            await limiter.acquire()
            await limiter.release()

        await asyncio.create_task(touch("a"))
        await asyncio.create_task(touch("b"))
        await asyncio.create_task(touch("a"))  # a is now the most recent
        await asyncio.create_task(touch("c"))  # evicts b
        assert limiter.tenant_count == 2
        assert "b" not in limiter._limiters
        assert set(limiter._limiters) == {"a", "c"}

    async def test_a_tenant_holding_a_slot_is_not_evicted(self) -> None:
        limiter = PerTenantRateLimiter(max_tenants=1)
        limiter.set_tenant("busy")
        await limiter.acquire()

        async def other() -> None:
            limiter.set_tenant("other")
            await limiter.acquire()
            await limiter.release()

        await asyncio.create_task(other())
        assert "busy" in limiter._limiters
        await limiter.release()  # still releases the slot it took
        assert limiter._limiters["busy"].in_use == 0

    async def test_close(self) -> None:
        async with PerTenantRateLimiter() as limiter:
            limiter.set_tenant("t")
            await limiter.acquire()
            await limiter.release()
        with pytest.raises(RuntimeError, match="closed"):
            await limiter.acquire()
        assert limiter.tenant_count == 0
        assert "closed" in repr(limiter)
