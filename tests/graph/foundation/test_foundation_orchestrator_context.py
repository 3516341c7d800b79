"""deskwork.graph.core.orchestrator_context: teardown order, isolation of failures, status."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from deskwork.graph.core.orchestrator_context import OrchestratorContext
from deskwork.graph.core.rate_limiting import SemaphoreRateLimiter


class Part:
    def __init__(self, name: str, log: list[str], *, fail: bool = False) -> None:
        self.name, self.log, self.fail = name, log, fail

    async def close(self) -> None:
        self.log.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} failed with password=hunter2")


class SyncExtra:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def close(self) -> None:
        self.log.append("sync-extra")


class AcloseExtra:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def aclose(self) -> None:
        self.log.append("aclose-extra")


def _context(log: list[str], *, failing: set[str] | None = None) -> OrchestratorContext:
    failing = failing or set()

    def part(name: str) -> Part:
        return Part(name, log, fail=name in failing)

    return OrchestratorContext(
        slot_manager=part("slots"),
        session_manager=part("sessions"),
        template_managers=[part("tm1"), part("tm2")],
        rate_limiter=part("limiter"),
        extras=[part("extra"), SyncExtra(log), AcloseExtra(log)],
    )


async def test_close_order() -> None:
    log: list[str] = []
    ctx = _context(log)
    await ctx.close()
    assert log == [
        "extra",
        "sync-extra",
        "aclose-extra",
        "tm1",
        "tm2",
        "limiter",
        "slots",
        "sessions",
    ]
    assert ctx.is_closed


async def test_a_failing_component_is_logged_and_does_not_stop_the_rest() -> None:
    log: list[str] = []
    ctx = _context(log, failing={"extra", "limiter"})
    with capture_logs() as logs:
        await ctx.close()
    assert log[-3:] == ["limiter", "slots", "sessions"]
    failures = [e for e in logs if e["event"] == "orchestrator_context_close_failed"]
    assert [e["component"] for e in failures] == ["extras[0]", "rate_limiter"]
    assert failures[0]["exc_type"] == "RuntimeError"
    assert failures[0]["log_level"] == "error"
    assert "hunter2" not in failures[0]["exc_msg"]


async def test_extra_without_close_is_reported_not_raised() -> None:
    with capture_logs() as logs:
        await OrchestratorContext(extras=[object()]).close()
    assert logs[0]["exc_type"] == "TypeError"


async def test_close_is_idempotent() -> None:
    log: list[str] = []
    ctx = _context(log)
    await ctx.close()
    await ctx.close()
    assert log.count("sessions") == 1


async def test_async_with_closes_even_on_error_and_cannot_reenter() -> None:
    log: list[str] = []
    ctx = _context(log)
    with pytest.raises(ValueError, match="boom"):
        async with ctx as entered:
            assert entered is ctx
            assert not ctx.is_closed
            raise ValueError("boom")
    assert ctx.is_closed
    assert "sessions" in log
    with pytest.raises(RuntimeError, match="closed"):
        async with ctx:
            pass


async def test_with_a_real_rate_limiter_and_empty_context() -> None:
    limiter = SemaphoreRateLimiter()
    async with OrchestratorContext(rate_limiter=limiter):
        pass
    assert limiter.is_closed
    empty = OrchestratorContext()
    await empty.close()
    assert empty.is_closed


def test_repr_names_components_and_status() -> None:
    ctx = OrchestratorContext(rate_limiter=SemaphoreRateLimiter(), extras=[SyncExtra([])])
    text = repr(ctx)
    assert "rate_limiter=SemaphoreRateLimiter" in text
    assert "extras[0]=SyncExtra" in text
    assert "status=open" in text
    assert "slot_manager" not in text
