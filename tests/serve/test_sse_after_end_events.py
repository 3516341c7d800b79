"""The event stream of a finished run replays the custom events stored after its end (a
note emitted on the desk's bus once the run was over), then ends: its log's end is its last
``run.*`` event, no longer its last event (the stream waited for live events for ever). A
late event named ``run.*`` (``run.reviewed``) is delivered, not stored: stored, it hid the
end and the stream of the completed run never ended."""

from __future__ import annotations

import httpx
import pytest
from serve_support import Live, parse_sse

from deskwork import Event
from deskwork.utils import new_id, utc_now


@pytest.mark.parametrize("kind", ["custom.feedback", "run.reviewed"])
async def test_a_finished_run_s_stream_ends_after_its_late_custom_events(
    live: Live, kind: str
) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=5) as client:
        done = await client.post("/runs?wait=true", json={"runner": "echo", "job": {"input": "hi"}})
        run_id = done.json()["run_id"]
        note = Event(event_id=new_id(), type=kind, timestamp=utc_now(),
                     run_id=run_id, source="reviewer", payload={"score": 5})  # fmt: skip
        live.desk.event_bus.emit(note)

        frames = parse_sse((await client.get(f"/runs/{run_id}/events")).text)

    kinds = [frame["data"].get("type") for frame in frames[:-1]]
    assert frames[-1] == {"id": None, "event": "end", "data": {"status": "completed"}}
    if kind == "run.reviewed":  # not stored after the end: the log's last run.* is its end
        assert kinds[-1] == "run.completed", kinds
        return
    assert kinds[-2:] == ["run.completed", "custom.feedback"], kinds
    assert frames[-2]["id"] == str(len(frames) - 2)  # its position in the stored log
