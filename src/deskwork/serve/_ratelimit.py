"""ASGI middleware: a request rate limit per client address (a token bucket each).

Off unless ``create_app(..., rate_limit=...)`` / ``deskwork serve --rate-limit`` sets it. It
answers before the token check, so guessing tokens is limited too; the viewer's static files
are not counted. A refused request gets 429 with ``Retry-After`` (whole seconds).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from deskwork.exceptions import ConfigurationError
from deskwork.serve._security import ASGIApp, Receive, Scope, Send, is_public, reply
from deskwork.utils import is_integer, is_number

__all__ = ["RateLimitMiddleware", "TokenBuckets", "check_rate"]


def check_rate(rate: float, burst: int) -> None:
    """Raise :class:`ConfigurationError` unless ``rate`` is a finite number above 0 and
    ``burst`` an int of 1 or more (NaN let every request through)."""
    rate_ok = is_number(rate) and 0 < rate < math.inf
    if not rate_ok or not is_integer(burst) or burst < 1:
        raise ConfigurationError(
            f"rate_limit must be a number above 0 and rate_burst an int of 1 or more,"
            f" not {rate!r}, {burst!r}"
        )


class TokenBuckets:
    """``rate`` requests a second per key, with bursts of up to ``burst``."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        keys: int = 10_000,
    ) -> None:
        check_rate(rate, burst)
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._keys = keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> float:
        """Spend one request of ``key``: 0 when allowed, else the seconds until one is."""
        now = self._clock()
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / self.rate
        if key not in self._buckets and len(self._buckets) >= self._keys:
            self._forget_full(now)
        self._buckets[key] = (tokens - 1, now)
        return 0.0

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled (they equal a new one)."""
        full = [
            key
            for key, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.burst
        ]
        for key in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[key]


class RateLimitMiddleware:
    """Answers 429 to a client address over its request rate."""

    def __init__(self, app: ASGIApp, *, rate: float, burst: int) -> None:
        self.app = app
        self.buckets = TokenBuckets(rate, burst)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_public(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = self.buckets.take(str(client[0]) if client else "")
        if wait > 0:
            retry = str(max(1, math.ceil(wait))).encode()
            await reply(send, 429, "too many requests", [(b"retry-after", retry)])
            return
        await self.app(scope, receive, send)
