"""A streamed durable run delivers its tokens while the model call runs; its step still
records the whole answer, and a recovered run emits no token twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from durablekit import lines, open_store
from faultkit import kill_during, run_faults_app

from deskwork import Desk, Worker
from deskwork.adapters.base import BaseModelAdapter, StreamChunk
from deskwork.core.event import Event


class _Hesitant(BaseModelAdapter):
    """Streams ``hel``, then waits (up to 5 s) until the run has seen that token before it
    streams ``lo``: the call ends only after its first token reached the run."""

    def __init__(self) -> None:
        self.first_token_seen = asyncio.Event()
        self.seen_while_streaming = False
        self.calls = 0

    async def acomplete(self, **params: Any) -> Any:
        self.calls += 1
        assert params["stream"]
        return self._stream()

    async def _stream(self) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(content="hel")
        try:
            await asyncio.wait_for(self.first_token_seen.wait(), timeout=5)
            self.seen_while_streaming = True
        except TimeoutError:
            pass
        yield StreamChunk(content="lo")
        usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        yield StreamChunk(finish_reason="stop", usage=usage)


async def test_tokens_reach_the_run_while_the_model_call_runs(tmp_path: Path) -> None:
    adapter = _Hesitant()
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    loop = asyncio.get_running_loop()

    def on_event(event: Event) -> None:
        if event.type == "stream.token":
            loop.call_soon_threadsafe(adapter.first_token_seen.set)

    try:
        report = await desk.arun(Worker(name="talker"), "hi", stream=True, on_event=on_event)
        from dbos import DBOS

        steps = await asyncio.to_thread(DBOS.list_workflow_steps, report.run_id)
    finally:
        desk.close()
    assert adapter.seen_while_streaming, "the first token arrived only after the call ended"
    assert (report.status, report.content) == ("completed", "hello")
    tokens = [e.payload["token"] for e in report.events if e.type == "stream.token"]
    assert tokens == ["hel", "lo"]
    assert adapter.calls == 1
    # the step recorded the whole stream
    assert [s["function_name"].rsplit(":", 1)[0] for s in steps] == ["deskwork.model:m"]
    recorded: Any = steps[0]["output"]
    assert [chunk.content for chunk in recorded.chunks][:2] == ["hel", "lo"]


def _token_events(directory: Path, run_id: str) -> list[tuple[str, str]]:
    store = open_store(directory, {})
    try:
        events = store.get_events(run_id)
    finally:
        store.close()
    return [(e.payload["type"], e.payload["token"]) for e in events if e.type == "stream.token"]


def test_a_recovered_streamed_run_emits_each_token_once(tmp_path: Path) -> None:
    """Killed during tool call 2 of a streamed run; recovery replays the two recorded model
    answers as streams, and the stored token events are those of one uninterrupted run."""
    kill_during(tmp_path, "step_two", "stream", "s-1")
    before = _token_events(tmp_path, "s-1")
    assert before, "the first process stored no token"

    assert run_faults_app(tmp_path, "recover") == [
        {"run_id": "s-1", "status": "completed", "content": "all done"}
    ]
    assert len(lines(tmp_path / "model_calls")) == 3  # two recorded answers, one new
    after = _token_events(tmp_path, "s-1")
    assert after[: len(before)] == before
    assert run_faults_app(tmp_path, "stream", "s-2") == {"status": "completed"}  # no crash
    assert after == _token_events(tmp_path, "s-2")
