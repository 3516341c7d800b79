"""The desk's one retry policy for model calls, whatever the adapter.

The desk retries a failed call ``num_retries`` times when the error is transient (HTTP 408,
409, 425, 429, 5xx, connection errors and timeouts), waiting with exponential backoff and
full jitter, or exactly as long as the provider's ``Retry-After`` asks. The adapter is called
with ``num_retries=0`` so that its client does not retry as well: the number of requests is
exactly ``1 + num_retries``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from deskwork.utils import is_number

__all__ = ["REFUSED_STATUSES", "RetryPolicy", "is_transient", "retry_after_seconds", "with_retries"]

T = TypeVar("T")

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
REFUSED_STATUSES = frozenset({401, 403, 404})
"""A bad key, a forbidden or unknown model: the same request is refused again, whatever
form it takes (streamed or not, a structured output's fallback)."""
_TRANSIENT_NAMES = frozenset(
    {
        "RateLimitError",
        "APIConnectionError",
        "APITimeoutError",
        "Timeout",
        "ServiceUnavailableError",
        "InternalServerError",
        "ConnectError",
        "ReadTimeout",
    }
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How the desk waits between retries of a failed model call.

    The number of retries is the desk's ``num_retries``; this only shapes the waits::

        from deskwork.adapters import RetryPolicy

        desk = Desk(model="openai/gpt-5-nano", num_retries=3,
                    retry_policy=RetryPolicy(initial_interval=1.0, max_interval=20.0))
    """

    initial_interval: float = 0.5
    """Seconds before the first retry (before jitter)."""
    backoff_factor: float = 2.0
    """Each retry waits this many times longer than the one before."""
    max_interval: float = 30.0
    """The longest backoff wait, in seconds."""
    jitter: bool = True
    """Wait a random time up to the backoff ("full jitter") so clients do not retry in step."""
    max_retry_after: float = 60.0
    """A provider asking to wait longer than this (``Retry-After``) is not retried."""

    def __post_init__(self) -> None:
        if self.initial_interval < 0 or self.max_interval < 0 or self.max_retry_after < 0:
            raise ValueError("retry intervals must be >= 0")
        if self.backoff_factor < 1:
            raise ValueError("backoff_factor must be >= 1")

    def backoff(self, retry: int) -> float:
        """The wait before retry number ``retry`` (0-based) when the provider names none."""
        ceiling = min(self.max_interval, self.initial_interval * self.backoff_factor**retry)
        return random.uniform(0, ceiling) if self.jitter else ceiling

    def wait_before(self, retry: int, error: BaseException) -> float | None:
        """Seconds to wait before retrying after ``error``; ``None``: do not retry."""
        if not is_transient(error):
            return None
        asked = retry_after_seconds(error)
        if asked is None:
            return self.backoff(retry)
        return asked if asked <= self.max_retry_after else None


def is_transient(error: BaseException) -> bool:
    """Whether a failed call may succeed if made again (rate limits, overload, network)."""
    from deskwork.runtime.context import is_context_limit_error

    if isinstance(error, Exception) and is_context_limit_error(error):
        return False
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in _TRANSIENT_STATUS or status >= 500
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(error).__mro__)


def _headers(error: BaseException) -> dict[str, str]:
    candidates = (
        getattr(getattr(error, "response", None), "headers", None),  # httpx / OpenAI SDK
        getattr(error, "litellm_response_headers", None),  # LiteLLM's copy of them
        getattr(error, "headers", None),
    )
    for headers in candidates:
        if headers:
            try:
                return {str(k).lower(): str(v) for k, v in dict(headers).items()}
            except (TypeError, ValueError):
                continue
    return {}


def retry_after_seconds(error: BaseException) -> float | None:
    """The wait a provider asked for: ``retry-after-ms``, ``retry-after`` (seconds or an
    HTTP date), or an error's own ``retry_after`` attribute; ``None`` if it named none."""
    own = getattr(error, "retry_after", None)
    if is_number(own):
        return max(float(own), 0.0)
    headers = _headers(error)
    if "retry-after-ms" in headers:
        seconds = _number(headers["retry-after-ms"])
        if seconds is not None:
            return max(seconds / 1000, 0.0)
    if "retry-after" in headers:
        text = headers["retry-after"]
        seconds = _number(text)
        if seconds is not None:
            return max(seconds, 0.0)
        try:
            import email.utils  # lazily: only a Retry-After date needs it

            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        return max(when.timestamp() - time.time(), 0.0)
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


RetryListener = Callable[[int, float, BaseException], None]
"""``on_retry(retry_number, wait_seconds, error)``, called before each wait."""


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    retries: int,
    policy: RetryPolicy,
    on_retry: RetryListener | None = None,
) -> T:
    """``await attempt()``, retried up to ``retries`` times on transient errors."""
    retry = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            wait = policy.wait_before(retry, exc) if retry < retries else None
            if wait is None:
                raise
            if on_retry is not None:
                on_retry(retry + 1, wait, exc)
            import asyncio  # here, not with deskwork (tests/core/test_lazy_imports.py)

            await asyncio.sleep(wait)
            retry += 1
