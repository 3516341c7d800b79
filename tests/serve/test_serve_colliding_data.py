"""The HTTP report of a custom runner whose final data has two keys that are one JSON key
(``1`` and ``"1"``; the run completed, its stored data null) is that report with ``data``
null, as the run store keeps it, where it was a 500."""

from __future__ import annotations

from typing import Any

import httpx

from deskwork import Desk, Job
from deskwork.core.report import Report
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter

COLLIDING = {1: "from the cache", "1": "from the database"}


class _Tally:
    """A custom runner whose final data has two keys that are one JSON key."""

    name = "tally"
    runner_type = "custom"

    async def arun(self, config: Any, job: Job) -> tuple[Report, None]:
        data = {"counts": dict(COLLIDING)}
        return Report(run_id=config.run_id, status="completed", content="tallied", data=data), None

    async def aresume(self, *args: Any) -> Any:
        raise NotImplementedError


async def test_the_http_report_of_such_data_is_the_report_with_data_null(
    live_factory: Any,
) -> None:
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter([]), run_store=InMemoryRunStore())
    desk.register(_Tally())  # type: ignore[arg-type]
    served = live_factory(desk)
    async with httpx.AsyncClient(base_url=served.url, timeout=10) as client:
        posted = await client.post(
            "/runs", params={"wait": "true"}, json={"runner": "tally", "job": {"input": "go"}}
        )
        assert posted.status_code == 200, posted.text
        body = posted.json()
        fetched = await client.get(f"/runs/{body['run_id']}")
    assert body["status"] == "completed" and body["content"] == "tallied"
    assert body["data"] is None
    assert fetched.status_code == 200, fetched.text
    assert fetched.json()["status"] == "completed" and fetched.json()["data"] is None
