"""Limits on concurrent LLM calls: one pool for everyone, or one pool per tenant.

Agents call ``acquire()`` before each LLM call and ``release()`` after it (only when the
acquire succeeded). ``close()`` — or leaving ``async with limiter:`` — stops new acquisitions.

Every limiter behaves the same once closed: ``is_closed`` is True, ``close()`` again does
nothing, ``acquire()`` (including one still waiting for a slot) and ``async with`` raise
``RuntimeError``, and a slot already held can still be released.
"""

from __future__ import annotations

import asyncio
import itertools
from abc import ABC, abstractmethod
from collections import OrderedDict
from contextvars import ContextVar
from types import TracebackType
from typing import Self

__all__ = ["PerTenantRateLimiter", "RateLimiter", "SemaphoreRateLimiter"]


class RateLimiter(ABC):
    """Grants permission for one LLM call at a time (or a few at a time).

    A subclass that overrides ``close()`` calls ``super().close()``, and its ``acquire()``
    calls :meth:`_check_open` first, so that it behaves like the shipped limiters once closed.
    """

    _closed: bool = False  # a class default: subclasses need not call __init__

    @abstractmethod
    async def acquire(self) -> None:
        """Wait until a call may start."""

    async def release(self) -> None:  # noqa: B027 - a no-op default is the documented API
        """Mark the call started by the matching ``acquire()`` as finished (no-op by default)."""

    @property
    def is_closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    async def close(self) -> None:
        """Refuse further ``acquire()`` calls and ``async with`` (safe to call twice)."""
        self._closed = True

    def _check_open(self) -> None:
        """Raise ``RuntimeError`` if the limiter is closed."""
        if self._closed:
            raise RuntimeError("rate limiter is closed")

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _check(max_concurrency: int, delay_seconds: float) -> None:
    if isinstance(max_concurrency, bool) or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency!r}")
    if not delay_seconds >= 0:
        raise ValueError(f"delay_seconds must be >= 0, got {delay_seconds!r}")


class SemaphoreRateLimiter(RateLimiter):
    """At most ``max_concurrency`` calls at once; each waits ``delay_seconds`` after acquiring."""

    def __init__(self, *, max_concurrency: int = 1, delay_seconds: float = 0.0) -> None:
        """Args:
        max_concurrency: calls allowed at the same time (at least 1).
        delay_seconds: pause after a slot is granted, spacing calls out (0 = none).

        Raises:
            ValueError: an argument is out of range.
        """
        _check(max_concurrency, delay_seconds)
        self._max_concurrency = max_concurrency
        self._delay_seconds = delay_seconds
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._in_use = 0

    @property
    def max_concurrency(self) -> int:
        """Calls allowed at the same time."""
        return self._max_concurrency

    @property
    def delay_seconds(self) -> float:
        """Pause after each grant."""
        return self._delay_seconds

    @property
    def in_use(self) -> int:
        """Slots currently held."""
        return self._in_use

    async def acquire(self) -> None:
        """Wait for a free slot, then for ``delay_seconds``.

        Raises:
            RuntimeError: the limiter is closed (before or while this call waited).
        """
        self._check_open()
        await self._semaphore.acquire()
        self._in_use += 1
        if self._closed:  # closed while this call waited for a slot
            self._release_slot()
            self._check_open()
        if self._delay_seconds:
            try:
                await asyncio.sleep(self._delay_seconds)
            except BaseException:
                self._release_slot()
                raise

    async def release(self) -> None:
        """Free the slot taken by ``acquire()``.

        Raises:
            RuntimeError: no slot is held (``release()`` without a successful ``acquire()``).
        """
        if self._in_use == 0:
            raise RuntimeError("release() called without a matching acquire()")
        self._release_slot()

    def _release_slot(self) -> None:
        self._in_use -= 1
        self._semaphore.release()

    async def close(self) -> None:
        """Refuse further ``acquire()`` calls; slots already held can still be released."""
        await super().close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"in_use={self._in_use}"
        return (
            f"SemaphoreRateLimiter(max_concurrency={self._max_concurrency}, "
            f"delay_seconds={self._delay_seconds}, {state})"
        )


_instance_ids = itertools.count()


class PerTenantRateLimiter(RateLimiter):
    """A separate :class:`SemaphoreRateLimiter` per tenant, so one tenant cannot starve others.

    Call :meth:`set_tenant` in the request's task before the graph runs; the tenant is kept in
    a ``ContextVar``, so concurrent requests each see their own. At most ``max_tenants``
    limiters are kept: beyond that the least recently used idle tenant's limiter is dropped.
    """

    def __init__(
        self, *, max_concurrency: int = 1, delay_seconds: float = 0.0, max_tenants: int = 10_000
    ) -> None:
        """Args:
        max_concurrency: calls allowed at the same time per tenant (at least 1).
        delay_seconds: pause after each grant (0 = none).
        max_tenants: tenants whose limiters are kept (at least 1).

        Raises:
            ValueError: an argument is out of range.
        """
        _check(max_concurrency, delay_seconds)
        if isinstance(max_tenants, bool) or max_tenants < 1:
            raise ValueError(f"max_tenants must be at least 1, got {max_tenants!r}")
        self._max_concurrency = max_concurrency
        self._delay_seconds = delay_seconds
        self._max_tenants = max_tenants
        self._limiters: OrderedDict[str, SemaphoreRateLimiter] = OrderedDict()
        self._tenant: ContextVar[str | None] = ContextVar(
            f"deskwork_graph_tenant_{next(_instance_ids)}", default=None
        )

    @property
    def max_tenants(self) -> int:
        """Tenants whose limiters are kept."""
        return self._max_tenants

    @property
    def tenant_count(self) -> int:
        """Tenants with a limiter right now."""
        return len(self._limiters)

    @property
    def current_tenant(self) -> str | None:
        """The tenant set in this context, if any."""
        return self._tenant.get()

    def set_tenant(self, tenant_id: str) -> None:
        """Make ``tenant_id`` the tenant of the current task (and tasks it starts).

        Raises:
            ValueError: ``tenant_id`` is empty.
        """
        if not tenant_id:
            raise ValueError("tenant_id must be a non-empty string")
        self._tenant.set(tenant_id)

    def _limiter_for_current(self) -> tuple[str, SemaphoreRateLimiter]:
        tenant = self._tenant.get()
        if tenant is None:
            raise RuntimeError("call set_tenant() before acquire()/release()")
        limiter = self._limiters.get(tenant)
        if limiter is None:
            limiter = SemaphoreRateLimiter(
                max_concurrency=self._max_concurrency, delay_seconds=self._delay_seconds
            )
            self._limiters[tenant] = limiter
            self._evict(keep=tenant)
        self._limiters.move_to_end(tenant)
        return tenant, limiter

    def _evict(self, *, keep: str) -> None:
        """Drop least recently used idle limiters (never ``keep``) while over ``max_tenants``."""
        excess = len(self._limiters) - self._max_tenants
        if excess <= 0:
            return
        idle = [t for t, lim in self._limiters.items() if lim.in_use == 0 and t != keep][:excess]
        for tenant in idle:
            del self._limiters[tenant]

    async def acquire(self) -> None:
        """Wait for a slot of the current tenant.

        Raises:
            RuntimeError: no tenant is set in this context, or the limiter is closed (before
                or while this call waited).
        """
        self._check_open()
        _, limiter = self._limiter_for_current()
        await limiter.acquire()

    async def release(self) -> None:
        """Free the current tenant's slot.

        Raises:
            RuntimeError: no tenant is set, or the tenant holds no slot.
        """
        tenant = self._tenant.get()
        if tenant is None:
            raise RuntimeError("call set_tenant() before acquire()/release()")
        limiter = self._limiters.get(tenant)
        if limiter is None:
            raise RuntimeError(f"release() called without a matching acquire() for {tenant!r}")
        await limiter.release()

    async def close(self) -> None:
        """Refuse further ``acquire()`` calls (waiting ones too) and forget idle tenants.

        Busy tenants keep their (closed) limiter until their slots are released.
        """
        await super().close()
        for tenant, limiter in list(self._limiters.items()):
            await limiter.close()
            if limiter.in_use == 0:
                del self._limiters[tenant]

    def __repr__(self) -> str:
        return (
            f"PerTenantRateLimiter(max_concurrency={self._max_concurrency}, "
            f"delay_seconds={self._delay_seconds}, max_tenants={self._max_tenants}, "
            f"tenants={len(self._limiters)}{', closed' if self._closed else ''})"
        )
