"""``POST /runs/{id}/cancel`` of a paused run ends it in one write: its failed record and its
``run.failed`` together (``RunStore.finish_run``, as ``deskwork runs fail`` and a durable
run's end do), so a failure between two writes cannot leave a claimed record ``running``
with its end stored, and an end stored meanwhile elsewhere stands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from serve_support import make_desk

from deskwork import Job
from deskwork.core.event import EventType, new_event
from deskwork.exceptions import StoreError
from deskwork.serve._hub import EventHub
from deskwork.serve._service import ApiError, RunService
from deskwork.store import SQLiteRunStore


async def _paused_run(path: Path) -> tuple[RunService, str]:
    desk = make_desk(f"sqlite:///{path}")
    clerk = next(r for r in desk.registered_runners() if r.name == "clerk")
    report = await desk.arun(clerk, Job(input="go"))
    assert report.status == "paused"
    hub = EventHub(desk.event_bus, asyncio.get_running_loop(), 0.05)
    return RunService(desk, None, hub), report.run_id


def _ends(service: RunService, run_id: str) -> list[tuple[str, dict[str, Any]]]:
    events = service.desk.run_store.get_events(run_id)
    return [(e.source, e.payload) for e in events if e.type == EventType.RUN_FAILED]


async def test_a_paused_run_is_ended_with_its_end_event_in_one_write(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    service, run_id = await _paused_run(tmp_path / "deskwork.db")
    try:
        store = service.desk.run_store
        before = store.get_run(run_id)
        assert before is not None

        def lost(*args: Any, **kwargs: Any) -> None:
            raise StoreError("the database went away after the first write")

        monkeypatch.setattr(store, "update_run", lost)  # only finish_run may end it
        await service.cancel(run_id)
        record = store.get_run(run_id)
        assert record is not None and record.status == "failed"
        assert record.output == before.output and record.state is None
        assert _ends(service, run_id) == [("deskwork.serve", {"errors": ["run cancelled"]})]
    finally:
        service.desk.close()


async def test_an_end_stored_elsewhere_after_the_claim_stands(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "deskwork.db"
    service, run_id = await _paused_run(path)
    try:
        store = service.desk.run_store
        claim = store.claim_paused

        def claimed_then_ended(run: str) -> bool:
            won = claim(run)
            end = new_event(run, EventType.RUN_FAILED, "elsewhere", {"errors": ["gone"]})
            other = SQLiteRunStore(path)  # another process ends the claimed run
            other.finish_run(run, "failed", None, None, None, end)
            other.close()
            return won

        monkeypatch.setattr(store, "claim_paused", claimed_then_ended)
        with pytest.raises(ApiError) as raised:
            await service.cancel(run_id)
        assert raised.value.status == 409 and "ended meanwhile" in str(raised.value)
        assert _ends(service, run_id) == [("elsewhere", {"errors": ["gone"]})]
    finally:
        service.desk.close()
