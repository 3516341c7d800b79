"""LLM calls with a timeout, retries on transient errors, and a rate limiter.

Retries target transient failures only: by default ``OSError`` (connection errors) and
``TimeoutError``. Register a provider's own rate-limit error with
:func:`register_transient_exception`; the registry is process-wide and thread-safe.

:func:`ainvoke_with_retry` puts the pieces together and is what agents call::

    reply = await ainvoke_with_retry(
        llm, messages, retry_config=RetryConfig(), timeout_seconds=30.0, rate_limiter=limiter
    )

A failed call raises :class:`LLMInvocationError` (no retry was configured, or the error is not
transient) or :class:`LLMRetryExhaustedError` (every attempt failed); both carry the original
exception as ``.cause``. A limiter that fails to grant a slot raises
:class:`RateLimitExceededError`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
)

from deskwork.adapters._retry import RetryPolicy, retry_after_seconds
from deskwork.core.redact import describe_exception
from deskwork.graph.core.exceptions import (
    LLMInvocationError,
    LLMRetryExhaustedError,
    OrchestratorError,
    RateLimitExceededError,
)
from deskwork.utils import check_seconds

if TYPE_CHECKING:
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.config.schema import RetryConfig
    from deskwork.graph.core.rate_limiting import RateLimiter

__all__ = [
    "TRANSIENT_EXCEPTIONS",
    "ainvoke_with_retry",
    "ainvoke_with_timeout",
    "astream_with_limits",
    "astream_with_timeout",
    "build_async_retryer",
    "deregister_transient_exception",
    "get_transient_exceptions",
    "rate_limited",
    "register_transient_exception",
]

TRANSIENT_EXCEPTIONS: tuple[type[BaseException], ...] = (OSError, TimeoutError)
"""The exception types retried; kept current by (de)registration. Read it through
:func:`get_transient_exceptions` (a ``from ... import`` copy would not see later changes)."""

_registry_lock = threading.Lock()


def register_transient_exception(exc_type: type[BaseException]) -> None:
    """Retry ``exc_type`` (and its subclasses) from now on; registering twice is a no-op.

    Raises:
        TypeError: ``exc_type`` is not an exception class.
    """
    global TRANSIENT_EXCEPTIONS
    if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
        raise TypeError(f"expected an exception class, got {exc_type!r}")
    with _registry_lock:
        if exc_type not in TRANSIENT_EXCEPTIONS:
            TRANSIENT_EXCEPTIONS = (*TRANSIENT_EXCEPTIONS, exc_type)


def deregister_transient_exception(exc_type: type[BaseException]) -> None:
    """Stop retrying ``exc_type``; a no-op when it is not registered."""
    global TRANSIENT_EXCEPTIONS
    with _registry_lock:
        TRANSIENT_EXCEPTIONS = tuple(t for t in TRANSIENT_EXCEPTIONS if t is not exc_type)


def get_transient_exceptions() -> tuple[type[BaseException], ...]:
    """The exception types retried right now, in registration order."""
    with _registry_lock:
        return TRANSIENT_EXCEPTIONS


def build_async_retryer(retry_config: RetryConfig) -> AsyncRetrying:
    """A tenacity retryer for ``retry_config``, retrying the transient exceptions registered now.

    The wait before retry ``n`` grows as ``initial_interval * backoff_factor ** (n - 1)``,
    capped at ``max_interval``; with ``jitter`` each wait is drawn uniformly from zero up to
    that value (AWS "full jitter"). An error that names its wait (``Retry-After``) waits that
    long, up to ``max_interval``. The waits are deskwork's one backoff rule
    (:class:`deskwork.adapters.RetryPolicy`; a ``backoff_factor`` below 1 counts as 1). After
    ``max_attempts`` the retryer raises ``tenacity.RetryError``; a non-transient exception is
    re-raised at once.
    """
    policy = RetryPolicy(  # deskwork's one backoff rule (and its Retry-After handling)
        initial_interval=retry_config.initial_interval,
        backoff_factor=max(retry_config.backoff_factor, 1.0),
        max_interval=retry_config.max_interval,
        jitter=retry_config.jitter,
        max_retry_after=retry_config.max_interval,
    )

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        asked = retry_after_seconds(error) if error is not None else None
        if asked is not None:  # the provider named its wait: honour it, up to max_interval
            return min(asked, retry_config.max_interval)
        return policy.backoff(state.attempt_number - 1)

    return AsyncRetrying(
        stop=stop_after_attempt(retry_config.max_attempts),
        wait=wait,
        retry=retry_if_exception_type(get_transient_exceptions()),
    )


async def ainvoke_with_timeout(
    llm: BaseLanguageModel[Any],
    messages: Any,
    timeout_seconds: float | None = None,
    config: RunnableConfig | None = None,
) -> Any:
    """``await llm.ainvoke(messages, config=config)``, limited to ``timeout_seconds``.

    Raises:
        TimeoutError: the call took longer than ``timeout_seconds`` (``None`` = no limit).
    """
    check_seconds(timeout_seconds, "timeout_seconds")
    async with asyncio.timeout(timeout_seconds):
        return await llm.ainvoke(messages, config=config)


async def astream_with_timeout(
    llm: BaseLanguageModel[Any],
    messages: Any,
    timeout_seconds: float | None = None,
    config: RunnableConfig | None = None,
) -> AsyncIterator[Any]:
    """Yield ``llm.astream(messages, config=config)`` chunks within ``timeout_seconds`` in all.

    The limit covers the time spent waiting for the model, from the first request to the last
    chunk (time the caller spends on each chunk does not count). The model's stream is closed
    when the caller stops early.

    Raises:
        TimeoutError: the stream did not finish in time.
    """
    check_seconds(timeout_seconds, "timeout_seconds")
    loop = asyncio.get_running_loop()
    remaining = timeout_seconds
    stream = aiter(llm.astream(messages, config=config))
    try:
        while True:
            started = loop.time()
            async with asyncio.timeout(remaining):
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    return
            if remaining is not None:
                remaining = max(remaining - (loop.time() - started), 0.0)
            yield chunk
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()


async def ainvoke_with_retry(
    llm: BaseLanguageModel[Any],
    messages: Any,
    *,
    retry_config: RetryConfig | None = None,
    timeout_seconds: float | None = None,
    config: RunnableConfig | None = None,
    rate_limiter: RateLimiter | None = None,
) -> Any:
    """Call the model once per attempt: take a limiter slot, invoke with the timeout, release.

    Raises:
        RateLimitExceededError: ``rate_limiter.acquire()`` failed (not retried).
        LLMInvocationError: the call failed and was not retried (no ``retry_config``, a single
            attempt, or a non-transient error).
        LLMRetryExhaustedError: every one of ``retry_config.max_attempts`` attempts failed.
    """

    async def attempt() -> Any:
        async with rate_limited(rate_limiter):
            return await ainvoke_with_timeout(llm, messages, timeout_seconds, config)

    try:
        if retry_config is None or retry_config.max_attempts == 1:
            return await attempt()
        return await build_async_retryer(retry_config)(attempt)
    except RetryError as exc:
        cause = exc.last_attempt.exception()
        attempts = exc.last_attempt.attempt_number
        raise LLMRetryExhaustedError(
            f"LLM call failed after {attempts} attempts: {_describe(cause)}",
            cause=cause,
            attempts=attempts,
        ) from cause
    except OrchestratorError:
        raise
    except Exception as exc:
        raise LLMInvocationError(f"LLM call failed: {_describe(exc)}", cause=exc) from exc


@asynccontextmanager
async def rate_limited(rate_limiter: RateLimiter | None) -> AsyncIterator[None]:
    """Hold one slot of ``rate_limiter`` (if any) for the ``async with`` block.

    The slot is released when the block ends, and only if ``acquire()`` succeeded.

    Raises:
        RateLimitExceededError: ``acquire()`` raised; the original error is ``.cause``.
    """
    if rate_limiter is None:
        yield
        return
    try:
        await rate_limiter.acquire()
    except Exception as exc:
        raise RateLimitExceededError(
            f"rate limiter refused the LLM call: {_describe(exc)}", cause=exc
        ) from exc
    try:
        yield
    finally:
        await rate_limiter.release()


async def astream_with_limits(
    llm: BaseLanguageModel[Any],
    messages: Any,
    *,
    timeout_seconds: float | None = None,
    config: RunnableConfig | None = None,
    rate_limiter: RateLimiter | None = None,
) -> AsyncIterator[Any]:
    """:func:`astream_with_timeout` holding a limiter slot for the whole stream (no retries:
    chunks already handed out cannot be taken back).

    Raises:
        RateLimitExceededError: the limiter refused the call.
        LLMInvocationError: the stream failed or timed out; the original error is ``.cause``.
    """
    async with rate_limited(rate_limiter):
        try:
            async for chunk in astream_with_timeout(llm, messages, timeout_seconds, config):
                yield chunk
        except OrchestratorError:
            raise
        except Exception as exc:
            raise LLMInvocationError(f"LLM stream failed: {_describe(exc)}", cause=exc) from exc


def _describe(exc: BaseException | None) -> str:
    return "unknown error" if exc is None else describe_exception(exc)
