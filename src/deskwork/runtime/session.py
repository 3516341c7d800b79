"""WorkerSession: a persisted multi-turn conversation with one worker."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Generator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from deskwork._aio import run_events
from deskwork._logs import get_stdlib_logger
from deskwork._sync import run_sync
from deskwork.core.event import Event
from deskwork.core.job import Job
from deskwork.core.message import Message
from deskwork.core.redact import redact_model
from deskwork.core.report import Report
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._run import INSTRUCTIONS_MARKER, MEMORY_MARKER
from deskwork.runtime.worker import Worker
from deskwork.utils import new_id

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = ["SESSION_KEY", "WorkerSession", "paused_turn_session", "session_of"]

SESSION_KEY = "deskwork_session"
"""The key of a session turn's ``Job.metadata`` that holds its session's id: a server that
resumes the turn by its run id (``POST /runs/{id}/resume``) saves it to the session."""

_log = get_stdlib_logger("deskwork.runtime")
_JOB_OPTIONS = ("thinking", "drop_params", "extra_body", "response_schema", "metadata")
_Key = tuple[int, str]
_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


_HELD: ContextVar[frozenset[_Key]] = ContextVar("deskwork_session_turns", default=frozenset())
"""The sessions whose turn this context (a turn, its tools) holds."""
_RESUMING: ContextVar[str | None] = ContextVar("deskwork_session_resuming", default=None)
"""The run id of the paused turn this context's session resumes (``Desk.aresume``, called by
the session, resumes it without going through the session again)."""


class _Turns:
    """One turn at a time per session (by session store and id), in the order they were
    sent: a turn reads the history the last one saved (two at once each saved their own,
    and one was lost). Any thread or event loop may ask (``run``, ``stream_run`` and
    ``arun`` may meet), so a thread lock guards the queues and a turn is handed to the next
    waiter on its own loop. A waiter that is cancelled holds nothing and keeps no one out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[_Key, deque[_Waiter]] = {}
        """The sessions with a turn running, each with the turns waiting, oldest first."""

    @asynccontextmanager
    async def turn(self, session: WorkerSession) -> AsyncIterator[None]:
        key = (id(session.desk.session_store), session.session_id)
        await self._acquire(key)
        held = _HELD.set(_HELD.get() | {key})
        try:
            yield
        finally:
            _HELD.reset(held)
            self._release(key)

    async def _acquire(self, key: _Key) -> None:
        if key in _HELD.get():
            raise ConfigurationError(
                f"a turn of session {key[1]!r} cannot start another turn of it (it would wait"
                " for itself): run it after this turn, or in another session"
            )
        loop = asyncio.get_running_loop()
        with self._lock:
            queue = self._queues.get(key)
            if queue is None:
                self._queues[key] = deque()
                return
            waiter: asyncio.Future[None] = loop.create_future()
            queue.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                if (loop, waiter) in queue:
                    queue.remove((loop, waiter))
                    raise
            if not waiter.cancelled():  # handed the turn just before the cancel landed
                self._release(key)
            raise  # (else _hand finds it cancelled and hands the turn on)

    def _release(self, key: _Key) -> None:
        with self._lock:
            queue = self._queues[key]
            if not queue:
                del self._queues[key]
                return
            loop, waiter = queue.popleft()
        try:
            loop.call_soon_threadsafe(self._hand, key, waiter)
        except RuntimeError:  # its loop is closed: no turn waits there any more
            self._release(key)

    def _hand(self, key: _Key, waiter: asyncio.Future[None]) -> None:
        if waiter.cancelled():
            self._release(key)
        else:
            waiter.set_result(None)


_TURNS = _Turns()


class WorkerSession:
    """Accumulates history across turns and saves it after each turn.

    Turns of one session (on one session store) run one at a time, in this process: a turn
    sent while another runs waits for it, then sees it in the history. A turn that starts
    another turn of its own session (a tool calling ``session.arun``) gets a
    :class:`~deskwork.exceptions.ConfigurationError` (it would wait for itself). Turns that
    overlap otherwise (in two processes on one database, or one sent while another is paused)
    each start from the history saved when they start, and each saves its messages with the
    others' (:meth:`SessionStore.update_messages <deskwork.store.SessionStore.update_messages>`):
    none is lost. Create it with :meth:`Desk.session`.
    """

    def __init__(self, desk: Desk, worker: Worker, session_id: str) -> None:
        self.desk = desk
        self.worker = worker
        self.session_id = session_id

    @classmethod
    def open(
        cls,
        desk: Desk,
        worker: Worker,
        session_id: str | None,
        metadata: dict[str, Any] | None,
    ) -> WorkerSession | None:
        """Load ``session_id`` (``None`` if bound to another worker) or create it."""
        store = desk.session_store
        session_id = session_id or new_id()
        record = store.get_session(session_id)
        if record is None:
            store.create_session(session_id, worker.name, dict(metadata or {}))
        elif record.worker_name != worker.name:
            return None
        return cls(desk, worker, session_id)

    def history(self) -> list[Message]:
        """The stored conversation."""
        return self.desk.session_store.get_messages(self.session_id)

    def close(self) -> None:
        """Delete the session and all its messages."""
        self.desk.session_store.delete_session(self.session_id)

    def _job(self, history: list[Message], message: Any, options: dict[str, Any]) -> Job:
        unknown = set(options) - set(_JOB_OPTIONS)
        if unknown:
            raise TypeError(f"unexpected session option(s): {', '.join(sorted(unknown))}")
        metadata = options.pop("metadata", None)
        if metadata is None or isinstance(metadata, dict):  # else Job says what is wrong
            metadata = {**(metadata or {}), SESSION_KEY: self.session_id}
        initial = _without_open_calls(history)
        return Job(input=message, initial_messages=initial, metadata=metadata, **options)

    def _save(self, report: Report, base: list[Message], sent: list[Message] | None = None) -> None:
        """Save the turn that started from the history ``base`` (sent to the model as
        ``sent``: ``base`` without a paused turn's open tool calls), with what other turns
        saved since (another process's, or one sent while this turn was paused)."""
        if report.status == "failed":
            return  # keep the last good history
        ours = _history(report.messages)
        if sent is not None and len(sent) < len(base) and ours[: len(sent)] == sent:
            ours = base + ours[len(sent) :]  # the open calls back where they were
        self.desk.session_store.update_messages(
            self.session_id, lambda current: _merge(base, ours, current, self.session_id)
        )

    async def arun(
        self,
        message: Any,
        *,
        stream: bool = False,
        on_event: Any = None,
        run_id: str | None = None,
        **options: Any,
    ) -> Report:
        """Send ``message`` with the stored history; save the updated conversation.

        ``run_id`` is the turn's run id (a new one by default). ``options`` are Job fields:
        thinking, drop_params, extra_body, response_schema, metadata.
        """
        async with _TURNS.turn(self):
            base = self.history()
            job = self._job(base, message, options)
            report = await self.desk.arun(
                self.worker, job, stream=stream, on_event=on_event, run_id=run_id
            )
            self._save(report, base, job.initial_messages or [])
            return report

    def run(self, message: Any, *, stream: bool = False, **options: Any) -> Report:
        """Synchronous :meth:`arun`."""
        return run_sync(self.desk.drained(lambda: self.arun(message, stream=stream, **options)))

    async def aresume(
        self,
        report: Report | str,
        decision: Any = None,
        *,
        stream: bool | None = None,
        on_event: Any = None,
    ) -> Report:
        """Resume a paused turn of this session (its Report or run id) and save the result
        (``stream`` and ``on_event`` as :meth:`Desk.aresume` takes them).
        :meth:`Desk.aresume` of a session's turn comes here too."""
        async with _TURNS.turn(self):
            base = self._paused_history(report)
            run_id = report.run_id if isinstance(report, Report) else report
            resuming = _RESUMING.set(run_id)
            try:
                resumed = await self.desk.aresume(
                    report, decision, runner=self.worker, stream=stream, on_event=on_event
                )
            finally:
                _RESUMING.reset(resuming)
            self._save(resumed, base)
            return resumed

    def _paused_history(self, report: Report | str) -> list[Message]:
        """The history as the paused turn of ``report`` saved it: from the run's stored state
        (a Report of the pause may carry no messages: one a server rebuilt from its record)."""
        run_id = report.run_id if isinstance(report, Report) else report
        record = self.desk.run_store.get_run(run_id) if isinstance(run_id, str) else None
        state = record.state if record is not None else None
        if state is not None:
            return _history(state.messages)
        return _history(report.messages if isinstance(report, Report) else [])

    def resume(self, report: Report | str, decision: Any = None) -> Report:
        """Synchronous :meth:`aresume`."""
        return run_sync(self.desk.drained(lambda: self.aresume(report, decision)), api="resume")

    def astream_run(self, message: Any, **options: Any) -> AsyncGenerator[Event, None]:
        """Run with streaming on and yield this run's events as they are emitted.

        Stopping early (``break``, then ``aclose()``) cancels the turn's run: it ends failed
        ("run cancelled") instead of going on, unobserved, still calling the model.
        """
        return run_events(
            lambda listener: self.arun(message, stream=True, on_event=listener, **options)
        )

    def stream_run(self, message: Any, **options: Any) -> Generator[Event, None, None]:
        """Synchronous :meth:`astream_run` (the run happens on a helper thread); closing the
        iterator early (``close()``, or its garbage collection after a ``break``) cancels the
        run as there."""
        events: queue.Queue[Event | BaseException | None] = queue.Queue()
        running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

        async def turn() -> Report:
            task = asyncio.current_task()
            if task is not None:
                running.append((asyncio.get_running_loop(), task))
            return await self.desk.drained(
                lambda: self.arun(message, stream=True, on_event=events.put, **options)
            )

        def work() -> None:
            try:
                asyncio.run(turn())
            except BaseException as exc:  # surfaced in the caller's thread
                events.put(exc)
            finally:
                events.put(None)

        thread = threading.Thread(target=work, name=f"session-{self.session_id}", daemon=True)
        thread.start()
        try:
            while (item := events.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if thread.is_alive() and running:  # the caller stopped reading: stop the run
                loop, task = running[0]
                with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: it ended
                    loop.call_soon_threadsafe(task.cancel)
            thread.join()


def _history(messages: list[Message]) -> list[Message]:
    """What a session keeps: no instruction/memory system messages; reasoning only where
    providers need it (assistant messages that carry tool calls); secrets redacted."""
    kept: list[Message] = []
    for message in messages:
        marker = message.metadata.get("deskwork")
        if message.role == "system" and marker in (INSTRUCTIONS_MARKER, MEMORY_MARKER):
            continue
        if message.role == "assistant" and not message.tool_calls:
            message = message.model_copy(
                update={"reasoning_content": None, "thinking_blocks": None}
            )
        kept.append(redact_model(message))
    return kept


def _merge(
    base: list[Message], ours: list[Message], current: list[Message], session_id: str
) -> list[Message]:
    """The history to save: ``ours`` (a turn's, from ``base``) with what other turns added
    to ``base`` meanwhile (``current`` is the stored history now). A turn's new messages stay
    together: after the others' when it starts with a new message, before them when it
    continues ``base``'s last turn (a resumed pause: its tool results must follow the call)."""
    if current == base:
        return ours
    n = len(base)
    theirs_tail = current[n:] if current[:n] == base else None
    ours_tail = ours[n:] if ours[:n] == base else None
    if ours_tail is None and theirs_tail is None:
        _log.warning(
            "session %s: two turns compacted its history at once; the later one is kept",
            session_id,
        )
        return ours
    if ours_tail is None:  # this turn compacted the history: the others' go after it
        return ours + (theirs_tail or [])
    if theirs_tail is not None and ours_tail and ours_tail[0].role == "tool":
        return base + ours_tail + theirs_tail  # continues base's last turn
    return current + ours_tail


def session_of(job: dict[str, Any] | None) -> str | None:
    """The id of the session whose turn ``job`` (a stored job: ``RunState.job``) is, if any."""
    metadata = job.get("metadata") if isinstance(job, dict) else None
    session_id = metadata.get(SESSION_KEY) if isinstance(metadata, dict) else None
    return session_id if isinstance(session_id, str) else None


def paused_turn_session(
    desk: Desk, run_id: str, job: dict[str, Any] | None, runner: Any
) -> WorkerSession | None:
    """The session to resume the paused run ``run_id`` through, so that the rest of its turn
    is saved to the session's history: when its stored ``job`` is a session's turn (its
    metadata's :data:`SESSION_KEY`), that session is still open, ``runner`` is a Worker, and
    the session is not the one resuming it already. ``None`` otherwise."""
    session_id = session_of(job)
    if session_id is None or not isinstance(runner, Worker) or _RESUMING.get() == run_id:
        return None
    if desk.session_store.get_session(session_id) is None:  # closed meanwhile
        return None
    return WorkerSession(desk, runner, session_id)


def _without_open_calls(history: list[Message]) -> list[Message]:
    """``history`` without a paused turn's tool calls (an assistant message with a call no
    tool message answers yet, and the answers to its other calls), nor tool results whose
    call is not in it (a turn that compacted the history while another was paused summarized
    the call): a provider refuses a call with no answer and an answer with no call, so the
    turn would fail. A paused turn's resume saves its calls back in place."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    called = {call.id for m in history for call in m.tool_calls or ()}
    open_ids: set[str | None] = set()
    for m in history:
        if m.tool_calls and any(call.id not in answered for call in m.tool_calls):
            open_ids.update(call.id for call in m.tool_calls)
    orphans = answered - called  # results whose call a compaction summarized away
    if not open_ids and not orphans:
        return history
    return [
        m
        for m in history
        if not (m.tool_calls and m.tool_calls[0].id in open_ids)
        and not (m.role == "tool" and m.tool_call_id in open_ids | orphans)
    ]
