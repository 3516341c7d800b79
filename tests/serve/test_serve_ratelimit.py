"""The optional request rate limit: per client address, over real HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from deskwork.serve._ratelimit import TokenBuckets


async def test_over_the_rate_a_client_gets_429_with_retry_after(live_factory: Any) -> None:
    live = live_factory(rate_limit=0.2, rate_burst=2, token="t0k")
    auth = {"Authorization": "Bearer t0k"}
    async with httpx.AsyncClient(base_url=live.url) as client:
        assert (await client.get("/runs", headers=auth)).status_code == 200
        assert (
            await client.get("/runs", headers={"Authorization": "Bearer guess"})
        ).status_code == 401
        refused = await client.get("/runs", headers=auth)
        assert refused.status_code == 429 and refused.json()["detail"] == "too many requests"
        assert 1 <= int(refused.headers["retry-after"]) <= 5
        assert (await client.get("/")).status_code == 200  # the viewer's page is not counted


async def test_without_a_limit_nothing_is_refused(live: Any) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        codes = {(await client.get("/runs")).status_code for _ in range(40)}
    assert codes == {200}


def test_buckets_refill_at_the_rate_and_keep_clients_apart() -> None:
    now = [0.0]
    buckets = TokenBuckets(2.0, 3, clock=lambda: now[0], keys=2)
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0.0  # another address has its own bucket
    now[0] = 0.5
    assert buckets.take("a") == 0.0 and buckets.take("a") > 0
    now[0] = 10.0
    assert buckets.take("c") == 0.0  # a third key: the refilled buckets are forgotten
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="rate_limit"):
        TokenBuckets(0, 1)
