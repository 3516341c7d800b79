"""gather_or_cancel: concurrent work stops when one part fails."""

from __future__ import annotations

import asyncio

import pytest

from deskwork._aio import gather_or_cancel


async def test_results_come_back_in_order() -> None:
    async def value(x: int, delay: float) -> int:
        await asyncio.sleep(delay)
        return x

    assert await gather_or_cancel(value(1, 0.02), value(2, 0.0), value(3, 0.01)) == [1, 2, 3]


async def test_a_failure_cancels_the_siblings() -> None:
    finished: list[str] = []
    cancelled: list[str] = []

    async def slow(name: str) -> None:
        try:
            await asyncio.sleep(0.2)
            finished.append(name)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    async def broken() -> None:
        await asyncio.sleep(0.01)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await gather_or_cancel(slow("a"), broken(), slow("b"))
    await asyncio.sleep(0.25)
    assert finished == []
    assert sorted(cancelled) == ["a", "b"]
