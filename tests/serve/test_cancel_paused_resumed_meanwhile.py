"""``POST /runs/{id}/cancel`` of a paused run that a resume claimed meanwhile (another
request or process) is a 409 that says so, and the resumed run is left as it is.

It answered 'run ... is paused; only running or paused runs cancel', which told the client
nothing of the resume that won.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from serve_support import make_desk

from deskwork import Job
from deskwork.serve._hub import EventHub
from deskwork.serve._service import ApiError, RunService


async def test_a_cancel_that_loses_the_pause_to_a_resume_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    desk = make_desk(f"sqlite:///{tmp_path / 'deskwork.db'}")
    try:
        clerk = next(r for r in desk.registered_runners() if r.name == "clerk")
        paused = await desk.arun(clerk, Job(input="go"))
        assert paused.status == "paused"
        hub = EventHub(desk.event_bus, asyncio.get_running_loop(), 0.05)
        service = RunService(desk, None, hub)
        store = desk.run_store
        claim = store.claim_paused

        def resumed_first(run_id: str) -> bool:
            assert claim(run_id)  # a resume elsewhere claims the pause first
            return claim(run_id)  # the cancel's own claim

        monkeypatch.setattr(store, "claim_paused", resumed_first)
        with pytest.raises(ApiError) as raised:
            await service.cancel(paused.run_id)
        assert raised.value.status == 409
        assert "no longer paused" in str(raised.value) and "not cancelled" in str(raised.value)
        record = store.get_run(paused.run_id)
        assert record is not None and record.status == "running"  # the resume's, untouched
    finally:
        desk.close()
