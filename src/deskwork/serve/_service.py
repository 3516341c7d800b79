"""What the HTTP routes do with the desk: start, resume, cancel, look up and stream runs.

The server keeps no state of its own beyond the asyncio tasks of the runs it started: runs,
events and paused states live in the desk's run store, so any process sharing that store
sees the same runs (streams of runs owned elsewhere follow the store by polling).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from deskwork.core.event import RUN_END_EVENTS, Event, EventType
from deskwork.core.job import Job
from deskwork.core.redact import describe_exception, redact, redact_model, redact_text
from deskwork.core.report import Report
from deskwork.core.state import RunRecord
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._tool_step import check_answer, check_answered_action
from deskwork.runtime.desk import Desk
from deskwork.runtime.runner import Runner
from deskwork.serve._direct import DirectWriter, chunk
from deskwork.serve._holdback import TokenGuard
from deskwork.serve._hub import EventHub, Outgoing, Subscription
from deskwork.serve._links import RunLinks
from deskwork.serve._models import JobIn, RunOut, RunReport
from deskwork.serve._sse import Write
from deskwork.store._errors import unstorable_text
from deskwork.utils import escape_surrogates, nan_as_null, new_id, to_jsonable

__all__ = [
    "END_EVENTS",
    "ApiError",
    "RunService",
    "check_action",
    "check_decision",
    "check_id",
    "checked_pause",
    "json_bytes",
    "make_job",
    "report_json",
    "sse_frame",
]

END_EVENTS = RUN_END_EVENTS
"""A run's event stream ends after one of these."""


class ApiError(Exception):
    """An error the API answers with ``status`` and ``{"detail": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def check_id(value: str | None, what: str) -> None:
    """422 for an id from a request body that no store keeps (a NUL or a lone surrogate: the
    stores refuse it when written), before anything starts: the store's ``StoreError`` was a
    500, or, raised in a stream's task, a stream cut short after its ``200``. The message
    leaves the id out (a lone surrogate cannot be written in a JSON response)."""
    if value is not None and unstorable_text(value):
        raise ApiError(422, f"{what} cannot hold a NUL character or a lone surrogate")


def check_decision(record: RunRecord, decision: Any) -> None:
    """422 for a confirmation answered with a JSON array, a number or an object without
    ``"approved"`` (the desk refuses them: :func:`deskwork.runtime._tool_step.is_approved`),
    or a user input answered with a value its tool does not take (``answer_schema``), before
    the resume starts, so the run stays paused."""
    action = record.state.pending_action if record.state is not None else None
    try:
        check_answer(action, decision)
    except ConfigurationError as exc:
        raise ApiError(422, str(exc)) from None


def check_action(record: RunRecord, action_id: str) -> None:
    """409 unless ``action_id`` is the action the paused run waits for now: an answer to an
    earlier pause (a request sent again) answered the next one, which its client never saw."""
    action = record.state.pending_action if record.state is not None else None
    try:
        check_answered_action(record.run_id, action, action_id)
    except ConfigurationError as exc:
        raise ApiError(409, str(exc)) from None


def checked_pause(record: RunRecord) -> Report:
    """The paused run of ``record`` as the Report of the pause a request was checked against
    (:func:`check_action`, :func:`check_decision`): the desk resumes that pause only (its
    claim names the action), not one the run reached meanwhile (another resume answered this
    one: the request's answer was checked against a pause that is gone)."""
    action = record.state.pending_action if record.state is not None else None
    return Report(run_id=record.run_id, status="paused", pending_action=action)


def make_job(**fields: Any) -> Job:
    """A Job, or 422 with pydantic's reason (an empty input, say)."""
    try:
        return Job(**fields)
    except ValidationError as exc:
        reasons = "; ".join(str(e.get("msg", "")) for e in exc.errors())
        raise ApiError(422, f"invalid job: {reasons}") from None


def report_json(report: Report) -> RunReport:
    """The JSON form of a report (no messages, no events: see ``/runs/{id}/events``),
    redacted as the run store keeps it."""
    pending = report.pending_action
    return RunReport(
        run_id=report.run_id,
        status=report.status,
        content=None if report.content is None else redact_text(report.content),
        data=_report_data(report.data),
        errors=[redact_text(e) for e in report.errors],
        pending_action=None if pending is None else redact_model(pending),
        metrics=to_jsonable(report.metrics),
    )


def _report_data(data: Any) -> Any:
    """A report's data as the run store keeps it: ``None`` if it has no JSON form (two keys
    of one dict that are one JSON key, data that contains itself), as the store's
    ``output_json`` (the run's ``run.completed`` event says why), not a 500."""
    try:
        return redact(to_jsonable(data))
    except (ValueError, RecursionError):
        return None


def json_bytes(data: Any) -> bytes:
    """``data`` (JSON values) as the compact UTF-8 JSON of a response: pydantic-core's, as
    FastAPI writes a response model (NaN and infinities as ``null``). A text with a lone
    surrogate (``"\\ud800"``: a run's texts may hold one; UTF-8 cannot encode it, so
    pydantic-core refuses it) goes out as its JSON escape ``\\ud800``, which a JSON reader
    turns back into that text; every other text stays as it is."""
    try:
        return to_json(data, inf_nan_mode="null")
    except PydanticSerializationError:
        text = json.dumps(nan_as_null(data), ensure_ascii=False, separators=(",", ":"))
        return escape_surrogates(text).encode("utf-8")  # in a JSON string: its \\uXXXX


def sse_frame(data: Any, *, event_id: int | None = None, event: str | None = None) -> bytes:
    """One Server-Sent Events frame."""
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, separators=(",", ":"), default=str))
    return ("\n".join(lines) + "\n\n").encode()


_SETTLE_SECONDS = 10.0
_BATCH = 256
"""At most this many stored events per write."""


def _end_frame(event: Event) -> bytes:
    return sse_frame({"status": event.type.removeprefix("run.")}, event="end")


def _log_end(stored: list[Event], start: int = 0) -> int | None:
    """The position of the end event that closes the run's stored log, or ``None`` while
    the run goes on: its last ``run.*`` event, if an end. Custom events stored after a
    finished run's end (``RunStore.add_event_after_end``) may follow it; the desk stores
    none whose type starts with ``run.`` there (``Desk._store_emitted``).

    Only ``stored[start:]`` is read: a log only grows, so with no end in ``stored[:start]``
    (an earlier read of it found none), a new end is in what was added since."""
    for index in range(len(stored) - 1, start - 1, -1):
        kind = stored[index].type
        if kind in END_EVENTS:
            return index
        if kind.startswith("run."):
            return None
    return None


def _ended_behind(stored: list[Event], position: int, start: int) -> int | None:
    """The position of the run's stored end if the stream has passed it without that
    end: another process ended the run while this one ran it, and the stream got live
    events of the run that the store refused after that end (their commit came later).
    ``stored[:start]`` holds no end (:func:`_log_end`)."""
    end = _log_end(stored, start)
    return end if end is not None and end < position else None


def _stored_end_frames(stored: list[Event], end: int) -> bytes:
    """The stored end event at its stored position (its ``id:``), then the ``end`` frame:
    how the run ended, for a stream whose positions ran past it (:func:`_ended_behind`)."""
    return Outgoing(stored[end]).frame(end) + _end_frame(stored[end])


async def _settle(task: asyncio.Task[Report], ready: Callable[[], bool]) -> None:
    """Wait until ``ready()`` (the run is recorded, the pause is claimed) or ``task`` ends.

    The desk does both before the runner's first await, so one turn of the loop is enough;
    other desks (durable ones) may take a few more."""
    await asyncio.sleep(0)
    deadline = asyncio.get_running_loop().time() + _SETTLE_SECONDS
    while not task.done() and not ready():
        if asyncio.get_running_loop().time() > deadline:
            return
        await asyncio.sleep(0.002)


class _Cursor:
    """Where a run's event stream is: the next position, the stored events sent that may
    still come live (by id), whether the run has ended, and how long the stream has been
    quiet (for keep-alives). Every event goes through the stream's :class:`TokenGuard`,
    from the first one on.

    Live events come in the order the store keeps them, and the store is only read from
    the stream's position on, so a live event can only repeat one read from the store: ids
    are kept from store reads until their live copy comes (not for every live event, which
    for a long run followed by many clients would grow every stream's set, each resize of
    it a pause in the hub's delivery to all of them)."""

    def __init__(
        self, after: int, keepalive_polls: int, direct: DirectWriter | None = None
    ) -> None:
        self.after = after
        self.keepalive_polls = keepalive_polls
        self.direct = direct
        self.position = 0
        self.seen: set[str] = set()
        self.guard = TokenGuard()
        self.ended = False
        self.quiet = 0

    def frames(self, batch: list[Outgoing], *, live: bool = True, stored: bool = False) -> bytes:
        """The frames of the events in ``batch`` (read from the store: ``stored``) not sent
        yet, and the ``end`` frame after the run's last event (``live``; a stored pause may
        have been resumed since); an empty batch counts toward a keep-alive comment."""
        if not batch:
            self.quiet += 1
            return b": keepalive\n\n" if self.quiet % self.keepalive_polls == 0 else b""
        self.quiet = 0
        frames: list[bytes] = []
        for item in batch:
            out = self._feed(item, stored=stored)
            if out is None:
                continue
            frames.append(out)
            if live and item.event.type in END_EVENTS:
                self.ended = True
                frames.append(_end_frame(item.event))
                break
        return b"".join(frames)

    def write_now(self, item: Outgoing) -> bool:
        """The stream's ``take_now`` (it has a direct writer): write ``item``'s frames to
        the connection at once (``False``: it ends the stream or the connection cannot
        take it now; the cursor did not move). The hub's delivery calls it for every
        stream of the run: a plain event goes out as the chunk all the streams share."""
        direct = self.direct
        if item.event.type in END_EVENTS or direct is None or not direct.ready():
            return False
        self.quiet = 0
        data = self._feed(item, chunked=True)
        if data:
            direct.write_chunk(data)
        return True

    def _feed(self, item: Outgoing, *, chunked: bool = False, stored: bool = False) -> bytes | None:
        """``item``'s frames (``None``: it was sent already), the cursor past it;
        ``chunked``: as one chunk of the response's body (for its direct writer);
        ``stored``: read from the store (its live copy may come later)."""
        event = item.event
        seen = self.seen
        if seen and event.event_id in seen:
            if not stored:
                seen.discard(event.event_id)  # its one live copy: it cannot come again
            return None
        if stored:
            seen.add(event.event_id)
        position = self.position
        self.position = position + 1
        if self.guard.idle and event.type != EventType.STREAM_TOKEN:  # the common case
            if position <= self.after:
                return b""
            return item.chunk(position) if chunked else item.frame(position)
        ready = self.guard.feed(position, item)
        frames = b"".join(out.frame(p) for p, out in ready if p > self.after)
        return chunk(frames) if chunked and frames else frames


class RunService:
    """Starts and follows runs of one desk on the server's event loop."""

    def __init__(
        self,
        desk: Desk,
        runners: Mapping[str, Runner] | None,
        hub: EventHub,
        *,
        poll_interval: float = 0.5,
        keepalive: float = 15.0,
    ) -> None:
        self.desk = desk
        self._fixed = dict(runners) if runners is not None else None
        self.hub = hub
        self.poll_interval = poll_interval
        self.keepalive = keepalive
        self.tasks: dict[str, asyncio.Task[Report]] = {}
        self.links = RunLinks(desk.run_store)
        self._resuming: set[str] = set()

    # -- runners ------------------------------------------------------------------------

    def runners(self) -> dict[str, Runner]:
        """The runners clients may start, by name."""
        if self._fixed is not None:
            return dict(self._fixed)
        found: dict[str, Runner] = {}
        for runner in self.desk.registered_runners():
            found.setdefault(runner.name, runner)
        return found

    def runner(self, name: str) -> Runner:
        runner = self.runners().get(name)
        if runner is None:
            raise ApiError(404, f"unknown runner {name!r}; see GET /runners")
        return runner

    # -- runs ---------------------------------------------------------------------------

    def track(self, run_id: str, task: asyncio.Task[Report]) -> None:
        """Keep ``task``, the run ``run_id``, for ``POST /runs/{id}/cancel`` and shutdown
        (not over the run's task still going: a resume that lost the race to it)."""
        going = self.tasks.get(run_id)
        if going is not None and not going.done():
            return
        self.tasks[run_id] = task
        task.add_done_callback(lambda t: self._forget(run_id, t))

    def _forget(self, run_id: str, task: asyncio.Task[Report]) -> None:
        if self.tasks.get(run_id) is task:
            del self.tasks[run_id]
        if not task.cancelled():
            task.exception()  # retrieved: a failing task is reported by its waiter, if any

    async def start(self, runner_name: str, job_in: JobIn) -> tuple[str, asyncio.Task[Report]]:
        """Start a run; it is recorded in the store when this returns."""
        runner = self.runner(runner_name)
        job = make_job(**job_in.model_dump(exclude_none=True))
        run_id = new_id()
        task = asyncio.ensure_future(self.desk.arun(runner, job, run_id=run_id))
        await self.started(run_id, task)
        return run_id, task

    async def started(self, run_id: str, task: asyncio.Task[Report]) -> None:
        """Track ``task``, the new run ``run_id``, once the store has its record. A run that
        could not start (the desk raised before recording it) is an error answered now:
        it was ``200 running`` for a run that never existed, a 500 with ``?wait=true``, a
        cut AG-UI stream. 409 for a configuration the desk refused (a run id taken
        meanwhile, a runner without a name), else 500."""
        self.track(run_id, task)
        await _settle(task, lambda: self.desk.run_store.get_run(run_id) is not None)
        exc = task.exception() if task.done() and not task.cancelled() else None
        if exc is not None:
            status = 409 if isinstance(exc, ConfigurationError) else 500
            raise ApiError(status, f"the run could not start: {describe_exception(exc)}")

    async def wait(self, run_id: str, task: asyncio.Task[Report]) -> RunReport:
        """The report of the run ``task`` runs when it ends or pauses; the client going away
        does not stop it."""
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise  # this request is cancelled (its client went away), not the run
        return self.outcome(run_id, task)

    def outcome(self, run_id: str, task: asyncio.Task[Report]) -> RunReport:
        """The report of the run ``task`` ran, which has ended or paused. A cancelled run
        (``POST /runs/{id}/cancel``, shutdown) answers with the end the store keeps: its
        task's result was a ``CancelledError``."""
        if not task.cancelled():
            return report_json(task.result())
        stored = self.view(run_id)
        return RunReport.model_validate(stored.model_dump(include=set(RunReport.model_fields)))

    def record(self, run_id: str) -> RunRecord:
        record = self.desk.run_store.get_run(run_id)
        if record is None:
            raise ApiError(404, f"unknown run {run_id!r}")
        return record

    async def resume(
        self, run_id: str, decision: Any, action_id: str | None = None
    ) -> asyncio.Task[Report]:
        """Resume a paused run; 409 when it is not paused (or another resume won), or when
        ``action_id`` is given and is not the action it waits for."""
        record = self.record(run_id)
        if record.status != "paused" or run_id in self._resuming:
            raise ApiError(409, f"run {run_id} is {record.status}, not paused")
        if action_id is not None:
            check_action(record, action_id)
        check_decision(record, decision)
        self._resuming.add(run_id)
        try:
            resume = self.resumer(record)
            task = asyncio.ensure_future(resume(checked_pause(record), decision))
            await _settle(task, lambda: self.record(run_id).status != "paused")  # claimed
        finally:
            self._resuming.discard(run_id)
        if task.done():
            exc = task.exception()
            if exc is not None:
                raise ApiError(409, f"run {run_id} cannot resume: {exc}")
            report = task.result()
            if report.status == "failed" and not report.events:  # refused, nothing ran
                raise ApiError(409, "; ".join(report.errors) or f"run {run_id} is not paused")
        self.track(run_id, task)
        return task

    def resumer(self, record: RunRecord) -> Callable[..., Awaitable[Report]]:
        """What resumes ``record``'s run: the desk (which saves the rest of a session's turn
        to the session, as ``session.resume`` does), with this server's runner of the paused
        run's name and kind when it has one (runners given to the server, not the desk)."""
        state = record.state
        runner = self.runners().get(state.runner_name) if state is not None else None
        if runner is None or state is None or runner.runner_type != state.runner_type:
            return self.desk.aresume
        return functools.partial(self.desk.aresume, runner=runner)

    async def cancel(self, run_id: str) -> None:
        """Cancel a run this server is running (a durable desk's: any process's), or end a
        paused run as failed."""
        record = self.record(run_id)
        if record.status == "running":
            if self.desk.durable:
                # DBOS cancels the workflow wherever it runs (it stops at its next step) and
                # the run ends failed now; cancelling the local task would not reach it
                await asyncio.to_thread(self.desk.cancel, run_id)
                return
            task = self.tasks.get(run_id)
            if task is None or task.done():
                raise ApiError(
                    409, f"run {run_id} is not running in this server; it cannot be cancelled"
                )
            task.cancel()
            await asyncio.wait([task], timeout=10)
            return
        if record.status != "paused":
            raise ApiError(
                409, f"run {run_id} is {record.status}; only running or paused runs cancel"
            )
        try:  # claimed first: a resume elsewhere can no longer run the pending action
            self.desk._cancel_paused(record, "deskwork.serve")
        except ConfigurationError as exc:
            raise ApiError(409, str(exc)) from None

    def view(self, run_id: str) -> RunOut:
        """``GET /runs/{id}``."""
        record = self.record(run_id)
        state = record.state
        events = self.desk.run_store.get_events(run_id)
        errors: list[str] = []
        if record.status == "failed":
            for event in reversed(events):
                if event.type == EventType.RUN_FAILED:
                    errors = [str(e) for e in event.payload.get("errors", [])]
                    break
        return RunOut(
            run_id=record.run_id,
            status=record.status,
            content=record.output,
            data=record.output_json,
            errors=errors,
            pending_action=state.pending_action if state and record.status == "paused" else None,
            metrics=to_jsonable(state.metrics) if state else {},
            runner=record.runner,
            input=record.input,
            messages=[m.model_dump(mode="json") for m in state.messages if m.role != "system"]
            if state
            else [],
            parent_run_id=self.links.parent(run_id, events),
            child_run_ids=self.links.children(record, events),
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    # -- event streams ------------------------------------------------------------------

    async def follow_run(
        self,
        run_id: str,
        after: int,
        sub: Subscription,
        write: Write,
        direct: DirectWriter | None = None,
    ) -> None:
        """Write the run's events from position ``after + 1``: stored ones, then live ones
        from ``sub`` (subscribed before the store is read), until the run completes, fails
        or pauses, or ``sub`` closes. Each frame's ``id`` is the event's position.

        Events that are ready together go out in one write. With ``direct``, a live event
        that arrives while the stream waits is written in the hub's delivery, unless it
        ends the stream or the connection cannot take it now (then it goes through
        ``write``, in order)."""
        stored = self.desk.run_store.get_events(run_id)
        polls = max(1, round(self.keepalive / self.poll_interval))
        cursor = _Cursor(after, polls, direct)
        for first in range(0, len(stored), _BATCH):
            batch = [Outgoing(e) for e in stored[first : first + _BATCH]]
            frames = cursor.frames(batch, live=False, stored=True)
            if frames:
                await write(frames)
        end = _log_end(stored)
        if end is not None:  # (custom events stored after it were sent with the others)
            await write(_end_frame(stored[end]))
            return
        take_now = None if direct is None else cursor.write_now
        scanned = len(stored)  # no end in the log up to here
        while not cursor.ended:
            if sub.ready or await sub.wait(take_now):
                frames = cursor.frames(sub.take())
            elif sub.closed:
                return
            else:  # a tick without live events: the store, for runs of other processes
                stored = self.desk.run_store.get_events(run_id)
                behind = _ended_behind(stored, cursor.position, scanned)
                if behind is not None:
                    await write(_stored_end_frames(stored, behind))
                    return
                scanned = len(stored)  # (an end at or past the position ends the cursor)
                batch = [Outgoing(e) for e in stored[cursor.position :]]
                frames = cursor.frames(batch, stored=True)
            if frames:
                await write(frames)

    async def follow_lifecycle(
        self, sub: Subscription, write: Write, direct: DirectWriter | None = None
    ) -> None:
        """Write the ``run.*`` events of every run from ``sub`` (a subscription to every
        run) as they happen, until ``sub`` closes; no replay (``direct`` is not used: a
        few events per run)."""
        quiet = 0.0
        await write(b": connected\n\n")  # subscribed: nothing from here on is missed
        while not sub.closed:
            if not sub.ready and not await sub.wait():
                quiet += self.poll_interval
                if quiet >= self.keepalive and not sub.closed:
                    quiet = 0.0
                    await write(b": keepalive\n\n")
                continue
            quiet = 0.0
            runs = [o for o in sub.take() if o.event.type.startswith("run.")]
            if runs:
                await write(b"".join(b"data: " + o.json + b"\n\n" for o in runs))

    async def shutdown(self) -> None:
        """Cancel the runs still going (they end ``failed``: run cancelled)."""
        tasks = [t for t in self.tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
