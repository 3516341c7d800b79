"""Sessions over HTTP: multi-turn conversations with a worker runner."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from deskwork.core.event import Event
from deskwork.core.report import Report
from deskwork.runtime.session import WorkerSession
from deskwork.runtime.worker import Worker
from deskwork.serve._holdback import TokenGuard
from deskwork.serve._hub import Outgoing
from deskwork.serve._models import HistoryOut, RunReport, SessionIn, SessionOut
from deskwork.serve._service import ApiError, RunService, check_id, sse_frame
from deskwork.utils import new_id

__all__ = ["SessionService"]


class SessionService:
    """Creates sessions, sends messages (streaming their events) and reads history."""

    def __init__(self, runs: RunService) -> None:
        self.runs = runs

    def _worker(self, name: str) -> Worker:
        runner = self.runs.runner(name)
        if not isinstance(runner, Worker):
            raise ApiError(
                409, f"runner {name!r} is a {runner.runner_type}; sessions need a worker"
            )
        return runner

    def create(self, body: SessionIn) -> SessionOut:
        check_id(body.session_id, "a session id")
        worker = self._worker(body.runner)
        session = self.runs.desk.session(worker, body.session_id, body.metadata)
        if session is None:
            raise ApiError(409, f"session {body.session_id!r} belongs to another worker")
        return SessionOut(session_id=session.session_id, runner=worker.name)

    def _open(self, session_id: str) -> WorkerSession:
        record = self.runs.desk.session_store.get_session(session_id)
        if record is None:
            raise ApiError(404, f"unknown session {session_id!r}")
        return WorkerSession(self.runs.desk, self._worker(record.worker_name), session_id)

    def _turn(
        self, session: WorkerSession, message: str, **options: Any
    ) -> tuple[str, asyncio.Task[Report]]:
        """Start a turn as a run this server can cancel (``POST /runs/{id}/cancel``) and
        cancels when it shuts down; its run id and task."""
        run_id = new_id()
        task = asyncio.ensure_future(session.arun(message, run_id=run_id, **options))
        self.runs.track(run_id, task)
        return run_id, task

    async def send(self, session_id: str, message: str) -> RunReport:
        run_id, task = self._turn(self._open(session_id), message)
        return await self.runs.wait(run_id, task)

    def stream(self, session_id: str, message: str) -> AsyncIterator[bytes]:
        """The turn's events as SSE frames, then an ``end`` frame with the report."""
        session = self._open(session_id)  # 404/409 before the stream starts
        return self._frames(session, message)

    async def _frames(self, session: WorkerSession, message: str) -> AsyncIterator[bytes]:
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        run_id, task = self._turn(session, message, stream=True, on_event=events.put_nowait)
        task.add_done_callback(lambda _: events.put_nowait(None))
        guard = TokenGuard()  # no secret split over tokens goes out in clear text
        position = 0
        while (event := await events.get()) is not None:
            ready = guard.feed(position, Outgoing(event))
            position += 1
            if ready:
                yield b"".join(item.frame(p) for p, item in ready)
        tail = b"".join(item.frame(p) for p, item in guard.close())
        end = sse_frame(self.runs.outcome(run_id, task).model_dump(mode="json"), event="end")
        yield tail + end

    def history(self, session_id: str) -> HistoryOut:
        session = self._open(session_id)
        messages = [m.model_dump(mode="json") for m in session.history()]
        return HistoryOut(session_id=session_id, messages=messages)
