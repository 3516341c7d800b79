"""deskwork.graph.core.llm_utils: timeouts, streaming, the retryer, the transient registry."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    RetryError,
)

from deskwork.graph.config.schema import RetryConfig
from deskwork.graph.core import llm_utils
from deskwork.graph.core.exceptions import (
    LLMError,
    LLMInvocationError,
    LLMRetryExhaustedError,
    RateLimitExceededError,
)
from deskwork.graph.core.llm_utils import (
    ainvoke_with_retry,
    ainvoke_with_timeout,
    astream_with_limits,
    astream_with_timeout,
    build_async_retryer,
    deregister_transient_exception,
    get_transient_exceptions,
    rate_limited,
    register_transient_exception,
)
from deskwork.graph.core.rate_limiting import RateLimiter, SemaphoreRateLimiter
from deskwork.graph.testing import MockLLM

FAST = RetryConfig(initial_interval=0.001, max_interval=0.002, max_attempts=3)


class ProviderRateLimitError(Exception):
    """Stands in for e.g. anthropic.RateLimitError."""


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    before = get_transient_exceptions()
    yield
    for exc_type in get_transient_exceptions():
        if exc_type not in before:
            deregister_transient_exception(exc_type)


class SlowLLM(MockLLM):
    """Sleeps before answering (to exercise timeouts)."""

    delay: float = 1.0

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(self.delay)
        return await super().ainvoke(input, config, **kwargs)


class TestTransientRegistry:
    def test_defaults(self) -> None:
        assert get_transient_exceptions() == (OSError, TimeoutError)

    def test_register_and_deregister(self) -> None:
        register_transient_exception(ProviderRateLimitError)
        register_transient_exception(ProviderRateLimitError)
        assert get_transient_exceptions() == (OSError, TimeoutError, ProviderRateLimitError)
        assert get_transient_exceptions() == llm_utils.TRANSIENT_EXCEPTIONS
        deregister_transient_exception(ProviderRateLimitError)
        deregister_transient_exception(ProviderRateLimitError)  # no-op when absent
        assert get_transient_exceptions() == (OSError, TimeoutError)

    @pytest.mark.parametrize("bad", [ValueError("instance"), int, "OSError"])
    def test_register_rejects_non_exception_classes(self, bad: Any) -> None:
        with pytest.raises(TypeError, match="exception class"):
            register_transient_exception(bad)

    def test_registration_is_thread_safe(self) -> None:
        types = [type(f"E{i}", (Exception,), {}) for i in range(40)]

        def work(chunk: list[type[Exception]]) -> None:
            for exc_type in chunk:
                register_transient_exception(exc_type)

        threads = [threading.Thread(target=work, args=(types[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert set(types) <= set(get_transient_exceptions())
        assert len(get_transient_exceptions()) == 42


class TestBuildAsyncRetryer:
    def test_a_provider_retry_after_is_honoured_up_to_max_interval(self) -> None:
        class RateLimited(TimeoutError):
            def __init__(self, seconds: float) -> None:
                super().__init__("slow down")
                self.retry_after = seconds

        retryer = build_async_retryer(RetryConfig(max_interval=3.0, jitter=False))
        waits = []
        for seconds in (1.25, 10.0):
            state = _state(retryer, 1)
            state.set_exception((RateLimited, RateLimited(seconds), None))
            waits.append(retryer.wait(state))
        assert waits == [1.25, 3.0]

    def test_backoff_without_jitter_is_exponential_and_capped(self) -> None:
        config = RetryConfig(
            initial_interval=0.5, backoff_factor=2.0, max_interval=3.0, jitter=False
        )
        retryer = build_async_retryer(config)
        waits = [retryer.wait(_state(retryer, n)) for n in range(1, 6)]
        assert waits == [0.5, 1.0, 2.0, 3.0, 3.0]

    def test_full_jitter_stays_between_zero_and_the_exponential(self) -> None:
        config = RetryConfig(initial_interval=0.5, backoff_factor=2.0, max_interval=3.0)
        retryer = build_async_retryer(config)
        for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 3.0)]:
            samples = [retryer.wait(_state(retryer, attempt)) for _ in range(200)]
            assert all(0 <= s <= ceiling for s in samples)
            assert min(samples) < ceiling / 2  # drawn from the whole range, not near the top

    async def test_retries_transient_errors_up_to_max_attempts(self) -> None:
        calls = 0

        async def flaky() -> str:
            nonlocal calls
            calls += 1
            raise ConnectionError("reset")

        with pytest.raises(RetryError):
            await build_async_retryer(FAST)(flaky)
        assert calls == 3

    async def test_logic_errors_are_not_retried(self) -> None:
        calls = 0

        async def broken() -> str:
            nonlocal calls
            calls += 1
            raise ValueError("bad prompt")

        with pytest.raises(ValueError):
            await build_async_retryer(FAST)(broken)
        assert calls == 1

    async def test_newly_registered_types_are_picked_up(self) -> None:
        calls = 0

        async def limited() -> str:
            nonlocal calls
            calls += 1
            if calls < 3:
                raise ProviderRateLimitError("slow down")
            return "ok"

        register_transient_exception(ProviderRateLimitError)
        assert await build_async_retryer(FAST)(limited) == "ok"
        assert calls == 3


def _state(retryer: AsyncRetrying, attempt: int) -> RetryCallState:
    state = RetryCallState(retryer, None, (), {})
    state.attempt_number = attempt
    return state


class TestAinvokeWithTimeout:
    async def test_passes_messages_and_config(self) -> None:
        llm = MockLLM(responses=["hi"])
        reply = await ainvoke_with_timeout(llm, [HumanMessage(content="q")], None, {"tags": ["t"]})
        assert reply.content == "hi"
        assert llm.calls[0][0].content == "q"

    async def test_times_out(self) -> None:
        llm = SlowLLM(responses=["late"], delay=1.0)
        with pytest.raises(TimeoutError):
            await ainvoke_with_timeout(llm, "q", timeout_seconds=0.01)

    @pytest.mark.parametrize("bad", [0, -1.0])
    async def test_rejects_non_positive_timeouts(self, bad: float) -> None:
        with pytest.raises(ValueError, match="timeout_seconds"):
            await ainvoke_with_timeout(MockLLM(responses=["x"]), "q", timeout_seconds=bad)


class DrippingLLM(MockLLM):
    """Streams one chunk every ``gap`` seconds and notes whether its stream was closed."""

    gap: float = 0.0
    closed: bool = False

    async def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        try:
            async for chunk in super().astream(input, config, **kwargs):
                await asyncio.sleep(self.gap)
                yield chunk
        finally:
            self.closed = True


class TestAstreamWithTimeout:
    async def test_yields_chunks(self) -> None:
        llm = MockLLM(stream_chunks=[["a", "b", "c"]])
        chunks = [c.content async for c in astream_with_timeout(llm, "q", timeout_seconds=5)]
        assert "".join(chunks) == "abc"

    async def test_timeout_covers_the_whole_stream(self) -> None:
        llm = DrippingLLM(stream_chunks=[["a"] * 20], gap=0.01)
        received: list[Any] = []
        with pytest.raises(TimeoutError):
            async for chunk in astream_with_timeout(llm, "q", timeout_seconds=0.05):
                received.append(chunk)
        assert 0 < len(received) < 20
        assert llm.closed

    async def test_consumer_time_does_not_count(self) -> None:
        llm = MockLLM(stream_chunks=[["a", "b", "c"]])
        chunks = []
        async for chunk in astream_with_timeout(llm, "q", timeout_seconds=0.05):
            await asyncio.sleep(0.03)
            chunks.append(chunk.content)
        assert "".join(chunks) == "abc"

    async def test_stopping_early_closes_the_model_stream(self) -> None:
        llm = DrippingLLM(stream_chunks=[["a", "b", "c"]])
        stream = astream_with_timeout(llm, "q")
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]
        assert llm.closed


class FailingLimiter(RateLimiter):
    released = False

    async def acquire(self) -> None:
        raise ConnectionError("limiter backend down")

    async def release(self) -> None:
        self.released = True


class TestAinvokeWithRetry:
    async def test_success_after_transient_failures(self) -> None:
        llm = MockLLM(responses=[ConnectionError("reset"), TimeoutError(), "ok"])
        reply = await ainvoke_with_retry(llm, "q", retry_config=FAST)
        assert reply.content == "ok"
        assert llm.call_count == 3

    async def test_exhausted_retries_carry_cause_and_attempts(self) -> None:
        error = ConnectionError("still down")
        llm = MockLLM(responses=[error, error, error])
        with pytest.raises(LLMRetryExhaustedError) as info:
            await ainvoke_with_retry(llm, "q", retry_config=FAST)
        assert info.value.cause is error
        assert info.value.attempts == 3
        assert info.value.__cause__ is error
        assert "after 3 attempts" in str(info.value)

    async def test_without_retry_a_failure_is_an_invocation_error(self) -> None:
        llm = MockLLM(responses=[ConnectionError("down"), "never"])
        with pytest.raises(LLMInvocationError) as info:
            await ainvoke_with_retry(llm, "q")
        assert isinstance(info.value.cause, ConnectionError)
        assert llm.call_count == 1

    async def test_single_attempt_config_is_no_retry(self) -> None:
        llm = MockLLM(responses=[ConnectionError("down"), "never"])
        with pytest.raises(LLMInvocationError):
            await ainvoke_with_retry(llm, "q", retry_config=RetryConfig(max_attempts=1))

    async def test_non_transient_error_is_not_retried(self) -> None:
        llm = MockLLM(responses=[ValueError("bad request"), "never"])
        with pytest.raises(LLMInvocationError) as info:
            await ainvoke_with_retry(llm, "q", retry_config=FAST)
        assert isinstance(info.value.cause, ValueError)
        assert llm.call_count == 1

    async def test_each_attempt_has_its_own_timeout(self) -> None:
        llm = SlowLLM(responses=["a", "b"], delay=0.2)
        with pytest.raises(LLMRetryExhaustedError) as info:
            await ainvoke_with_retry(
                llm,
                "q",
                retry_config=RetryConfig(initial_interval=0.001, max_attempts=2),
                timeout_seconds=0.01,
            )
        assert isinstance(info.value.cause, TimeoutError)

    async def test_error_messages_are_redacted(self) -> None:
        llm = MockLLM(responses=[ValueError("bad key sk-abcdefghijklmnop")])
        with pytest.raises(LLMInvocationError) as info:
            await ainvoke_with_retry(llm, "q")
        assert "sk-abcdefghijklmnop" not in str(info.value)

    async def test_limiter_slot_is_held_during_each_call_and_released(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=1)
        seen: list[int] = []

        class Watching(MockLLM):
            async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
                seen.append(limiter.in_use)
                return await super().ainvoke(input, config, **kwargs)

        llm = Watching(responses=[ConnectionError("x"), "ok"])
        await ainvoke_with_retry(llm, "q", retry_config=FAST, rate_limiter=limiter)
        assert seen == [1, 1]
        assert limiter.in_use == 0

    async def test_failed_acquire_is_rate_limit_error_and_not_released(self) -> None:
        limiter = FailingLimiter()
        llm = MockLLM(responses=["never"])
        with pytest.raises(RateLimitExceededError) as info:
            await ainvoke_with_retry(llm, "q", retry_config=FAST, rate_limiter=limiter)
        assert isinstance(info.value.cause, ConnectionError)
        assert isinstance(info.value, LLMError)
        assert limiter.released is False
        assert llm.call_count == 0


class TestRateLimitedAndStreamingWithLimits:
    async def test_rate_limited_holds_a_slot_for_the_block(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=2)
        async with rate_limited(limiter):
            assert limiter.in_use == 1
        assert limiter.in_use == 0
        with pytest.raises(KeyError):
            async with rate_limited(limiter):
                raise KeyError("body failed")
        assert limiter.in_use == 0
        async with rate_limited(None):
            pass

    async def test_rate_limited_wraps_a_failed_acquire(self) -> None:
        limiter = FailingLimiter()
        with pytest.raises(RateLimitExceededError):
            async with rate_limited(limiter):
                pytest.fail("the body must not run")
        assert limiter.released is False

    async def test_stream_holds_the_slot_until_the_end(self) -> None:
        limiter = SemaphoreRateLimiter()
        llm = MockLLM(stream_chunks=[["a", "b"]])
        seen = []
        async for chunk in astream_with_limits(llm, "q", rate_limiter=limiter):
            seen.append((chunk.content, limiter.in_use))
        assert [s for s in seen if s[0]] == [("a", 1), ("b", 1)]
        assert limiter.in_use == 0

    async def test_stream_failures_become_invocation_errors(self) -> None:
        limiter = SemaphoreRateLimiter()
        llm = DrippingLLM(stream_chunks=[["a"] * 10], gap=0.02)
        with pytest.raises(LLMInvocationError) as info:
            async for _ in astream_with_limits(
                llm, "q", timeout_seconds=0.03, rate_limiter=limiter
            ):
                pass
        assert isinstance(info.value.cause, TimeoutError)
        assert limiter.in_use == 0
        with pytest.raises(LLMInvocationError, match="ValueError"):
            async for _ in astream_with_limits(MockLLM(raise_on_call=ValueError), "q"):
                pass
