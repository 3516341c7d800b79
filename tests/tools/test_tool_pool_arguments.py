"""``ToolThreadPool`` refuses idle times its threads could not wait."""

from __future__ import annotations

import math

import pytest

from deskwork.tools._pool import ToolThreadPool


@pytest.mark.parametrize("idle", [math.inf, 1e300, math.nan, 0, -1])
def test_an_idle_time_a_thread_cannot_wait_is_refused(idle: float) -> None:
    # inf made each pool thread die in its first wait (OverflowError): the call never answered
    with pytest.raises(ValueError, match="idle_seconds must be > 0"):
        ToolThreadPool(2, idle_seconds=idle)


async def test_the_longest_idle_time_still_runs_calls() -> None:
    pool = ToolThreadPool(1, idle_seconds=3600)
    try:
        assert await pool.start(lambda: 42) == 42
    finally:
        pool.shutdown()
