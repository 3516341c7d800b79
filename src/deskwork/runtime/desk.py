"""Desk: the only door. Every runner starts here and gets a run record, one ordered
event stream, persisted state and pause/resume.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from deskwork._extras import require
from deskwork._sync import run_sync
from deskwork.adapters._retry import RetryPolicy
from deskwork.core.event import END_EVENT_BY_STATUS, RUN_END_EVENTS, Event, EventType, new_event
from deskwork.core.job import Job, as_job
from deskwork.core.metrics import sum_metrics
from deskwork.core.redact import describe_exception, redact, redact_model_json, redact_text
from deskwork.core.report import Report
from deskwork.event_bus import EventBus
from deskwork.exceptions import ConfigurationError, RunnerNotRegisteredError, RunNotRunningError
from deskwork.runtime._budget import Budget, current_budget
from deskwork.store._errors import unstorable_text
from deskwork.store._url import (
    DB_FILENAME,
    is_postgres,
    open_memory_store,
    open_run_store,
    open_session_store,
    resolve_database_url,
)
from deskwork.tools._pool import DEFAULT_TOOL_THREADS
from deskwork.utils import KNOWN_JSON, new_id, to_jsonable

if TYPE_CHECKING:
    import asyncio

    from langgraph.pregel import Pregel

    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.core.state import RunRecord, RunState
    from deskwork.core.types import RunStatus
    from deskwork.memory.base import MemoryStore
    from deskwork.runtime._queues import QueueSettings
    from deskwork.runtime.config import EventEmitter, RunConfig
    from deskwork.runtime.runner import Runner
    from deskwork.runtime.session import WorkerSession
    from deskwork.runtime.worker import Worker
    from deskwork.store.base import RunStore
    from deskwork.store.session import SessionStore
    from deskwork.tools._pool import ToolThreadPool

__all__ = ["DB_FILENAME", "Desk"]

EventListener = Callable[[Event], None]


class Desk:
    """Owns the model adapter, event bus, run/session/memory stores and the runner registry."""

    def __init__(
        self,
        model: str | None = None,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stream: bool = False,
        structured_stream_mode: Literal["off", "preview"] = "off",
        structured_output_retries: int = 3,
        max_iterations: int = 10,
        max_tool_calls: int = 20,
        num_retries: int = 0,
        respect_context_window: bool = True,
        max_context_messages: int | None = None,
        event_bus: EventBus | None = None,
        run_store: RunStore | None = None,
        memory_store: MemoryStore | None = None,
        session_store: SessionStore | None = None,
        adapter: BaseModelAdapter | None = None,
        storage_dir: str | Path = ".deskwork",
        max_tool_threads: int = DEFAULT_TOOL_THREADS,
        max_cost_usd: float | None = None,
        retry_policy: RetryPolicy | None = None,
        database_url: str | None = None,
        durable: bool = False,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stream = stream
        self.structured_stream_mode: Literal["off", "preview"] = structured_stream_mode
        self.structured_output_retries = structured_output_retries
        self.max_iterations = max_iterations
        self.max_tool_calls = max_tool_calls
        self.num_retries = num_retries
        self.retry_policy = retry_policy or RetryPolicy()
        """Backoff, jitter and ``Retry-After`` handling of the ``num_retries`` retries of a
        failed model call (the desk retries for every adapter; their clients do not)."""
        self.respect_context_window = respect_context_window
        if max_context_messages is not None:  # (the check imports what the first run does)
            from deskwork.runtime.config import check_max_context_messages

            check_max_context_messages(max_context_messages)
        self.max_context_messages = max_context_messages
        self.storage_dir = Path(storage_dir)
        self.database_url = resolve_database_url(database_url, storage_dir)
        """Where the stores live: ``database_url``, else ``$DESKWORK_DATABASE_URL``, else
        ``sqlite:///<storage_dir>/deskwork.db``."""
        self.event_bus = event_bus or EventBus()
        self._running: dict[str, RunConfig] = {}  # this desk's runs in progress, by id
        self.event_bus.add_recorder(self._store_emitted)
        self._memory_store = memory_store
        self._run_store = run_store
        self._session_store = session_store
        self._given_stores: list[Any] = [
            s for s in (run_store, session_store, memory_store) if s is not None
        ]
        self._adapter = adapter
        if max_tool_threads < 1:
            raise ValueError("max_tool_threads must be >= 1")
        self.max_tool_threads = max_tool_threads
        """How many sync (``def``) tool calls run at once, on the desk's daemon threads."""
        self._tool_pool: ToolThreadPool | None = None
        if max_cost_usd is not None and max_cost_usd <= 0:
            raise ValueError("max_cost_usd must be > 0")
        self.max_cost_usd = max_cost_usd
        """Spending limit of each run in USD (runs started inside a run count toward it)."""
        self._runners: dict[tuple[str, str], Runner] = {}
        # exact in-process objects of paused runs (resume falls back to the stored state)
        self._live_jobs: OrderedDict[str, Job] = OrderedDict()
        self._live_states: OrderedDict[str, RunState] = OrderedDict()
        self._live_runners: OrderedDict[str, Runner] = OrderedDict()
        self._starting: set[str] = set()  # caller-chosen run ids of runs in progress
        # runs whose completed/failed end this desk stored: nothing more of them is stored
        self._ended: OrderedDict[str, bool | None] = OrderedDict()
        # an event's check against _ended and its store, atomic per run: one lock per
        # stripe of run ids, so runs on other threads do not wait for each other's writes
        self._ending = tuple(threading.Lock() for _ in range(_ENDING_STRIPES))
        self.durable = durable
        """Run each run as a DBOS workflow on :attr:`database_url` (see ``docs/durable.md``)."""
        self.closed = False
        """Set by :meth:`close`: a durable desk then starts no durable work (no DBOS)."""

    # -- owned components (created on first use, so a Desk is cheap to make) ------------

    @property
    def adapter(self) -> BaseModelAdapter:
        """The model adapter (``LiteLLMAdapter`` unless one was given)."""
        if self._adapter is None:
            from deskwork.adapters.litellm import LiteLLMAdapter

            self._adapter = LiteLLMAdapter()
        return self._adapter

    @property
    def run_store(self) -> RunStore:
        """The run store of :attr:`database_url` (SQLite at ``<storage_dir>/deskwork.db`` by
        default), unless one was given."""
        if self._run_store is None:
            self._run_store = open_run_store(self.database_url)
        return self._run_store

    @property
    def session_store(self) -> SessionStore:
        """The session store of :attr:`database_url` (the same database), unless one was given."""
        if self._session_store is None:
            self._session_store = open_session_store(self.database_url)
        return self._session_store

    @property
    def memory_store(self) -> MemoryStore:
        """The memory store, unless one was given: PostgreSQL when :attr:`database_url` is a
        ``postgresql://`` URL, else in memory."""
        if self._memory_store is None:
            if is_postgres(self.database_url):
                self._memory_store = open_memory_store(self.database_url)
            else:
                from deskwork.memory.simple import InMemoryMemoryStore

                self._memory_store = InMemoryMemoryStore()
        return self._memory_store

    @memory_store.setter
    def memory_store(self, store: MemoryStore) -> None:
        self._memory_store = store
        self._given_stores.append(store)

    @property
    def tool_pool(self) -> ToolThreadPool:
        """The daemon threads that run sync tools off the event loop (``max_tool_threads``)."""
        if self._tool_pool is None:
            from deskwork.tools._pool import ToolThreadPool

            self._tool_pool = ToolThreadPool(self.max_tool_threads)
        return self._tool_pool

    # -- registry ---------------------------------------------------------------------

    def register(self, runner: Runner) -> None:
        """Make ``runner`` resumable by name (``desk.run`` registers automatically)."""
        self._runners[(runner.runner_type, runner.name)] = runner

    def unregister(self, runner: Runner) -> None:
        """Forget ``runner``: its paused runs resume only with ``runner=`` or after
        registering a runner of that name again."""
        key = (runner.runner_type, runner.name)
        self._runners.pop(key, None)
        for run_id, live in list(self._live_runners.items()):
            if live is runner or (live.runner_type, live.name) == key:
                del self._live_runners[run_id]

    register_worker = register
    unregister_worker = unregister
    register_workforce = register
    unregister_workforce = unregister

    def get_runner(self, runner_type: str, name: str) -> Runner | None:
        """A registered runner, or ``None``."""
        return self._runners.get((runner_type, name))

    def registered_runners(self) -> list[Runner]:
        """The registered runners, in registration order (``deskwork serve`` exposes them)."""
        return list(self._runners.values())

    # -- running ----------------------------------------------------------------------

    def config(
        self, run_id: str, *, stream: bool | None = None, emit: EventEmitter | None = None
    ) -> RunConfig:
        """A RunConfig carrying this desk's settings for ``run_id``."""
        return _run_config()(
            # a durable desk's calls are DBOS steps inside its runs (a passthrough elsewhere)
            adapter=_durable().adapter_for(self.adapter) if self.durable else self.adapter,
            emit=emit or self._emitter(run_id, [], None),
            run_id=run_id,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stream=self.stream if stream is None else stream,
            structured_output_retries=self.structured_output_retries,
            structured_stream_mode=self.structured_stream_mode,
            max_iterations=self.max_iterations,
            max_tool_calls=self.max_tool_calls,
            num_retries=self.num_retries,
            retry_policy=self.retry_policy,
            respect_context_window=self.respect_context_window,
            max_context_messages=self.max_context_messages,
            default_model=self.model,
            desk=self,
            tool_pool=self.tool_pool,
        )

    def _emitter(
        self, run_id: str, events: list[Event], listener: EventListener | None
    ) -> EventEmitter:
        store, bus, ended = self.run_store, self.event_bus, self._ended
        ending = self._ending[hash(run_id) % _ENDING_STRIPES]

        def emit(event_type: str, source: str, payload: dict[str, Any]) -> None:
            # a built-in type's own value text: no new string kept with every stored event
            name = event_type._value_ if type(event_type) is EventType else str(event_type)
            event = new_event(run_id, name, source, payload)
            end = _run_end.get() if name in RUN_END_EVENTS else None
            if end is not None and end.run_id != run_id:
                end = None  # not this run's own end (Desk._store_end of another run)
            with ending:
                try:
                    if run_id in ended:  # a cancel ended it while it went on (a step in flight)
                        if name not in _REOPENING_EVENTS:
                            raise RunNotRunningError(run_id)
                        del ended[run_id]  # claimed again (resume, recovery): the store decides
                    if end is not None:
                        store.finish_run(
                            run_id, end.status, end.output, end.output_json, end.state, event
                        )
                        end.stored = True
                    else:
                        store.add_event(event)  # refused if another process ended the run
                except RunNotRunningError:
                    if ended.get(run_id) is not _ENDED_HERE:  # (a step in flight after it)
                        _remember(ended, run_id, None)
                    if name in RUN_END_EVENTS and end is None:
                        return  # the run has its one end already
                    raise _run_stopped()(run_id) from None
                if name in _FINAL_EVENTS:
                    _remember(ended, run_id, _ENDED_HERE)
            events.append(event)
            if listener is not None:
                try:
                    listener(event)
                except Exception as exc:  # a broken listener never breaks the run
                    bus.record_error(event, exc)
            bus.deliver(event)  # stored: not again by the desk's recorder

        return emit

    async def arun(
        self,
        runner: Runner | Pregel[Any, Any, Any, Any],
        job: Job | str,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
        limits: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> Report:
        """Run ``job`` on ``runner``; always returns a Report (never raises for run failures).

        Args:
            runner: a Worker, Workforce, Flow or other runner; a compiled LangGraph graph
                runs as ``deskwork.graph.GraphRunner(graph)``.
            job: the job (a plain string becomes ``Job(input=...)``).
            stream: override the desk's ``stream`` setting for this run.
            on_event: called with every event of this run, in order.
            limits: ``RunConfig`` fields to override for this run only, for example
                ``{"max_iterations": 3, "max_tool_calls": 5}`` (bounded child runs).
            run_id: the run's id, chosen by the caller (an idempotency key); generated when
                omitted.

        Raises:
            ConfigurationError: ``job`` is ``None`` or a blank string, ``run_id`` is empty or
                holds a NUL character or a lone surrogate, a run with that id exists already
                (finished, paused or running) in this desk's run store, or the runner's name
                is not a string.
        """
        job = job if isinstance(job, Job) else as_job(job)
        runner = _as_runner(runner)
        chosen = run_id is not None
        run_id = self._claim_run_id(run_id)
        try:
            if self.durable and not _durable().in_run():  # a run started in a run: inline
                durable: Report = await _durable().arun(  # DBOS: workflow id = run id, once
                    self, runner, job, run_id, stream, limits, on_event
                )
                return durable
            if chosen and not self.run_store.reserve_run(
                run_id, redact(job.to_state()), runner=runner.name
            ):  # another process took the id between the check and now
                raise ConfigurationError(_run_id_taken(run_id, "running"))
            return await self._start(runner, job, run_id, stream, on_event, limits)
        finally:
            self._starting.discard(run_id)

    async def _start(
        self,
        runner: Runner,
        job: Job,
        run_id: str,
        stream: bool | None,
        on_event: EventListener | None,
        limits: dict[str, Any] | None,
    ) -> Report:
        if unnamed_run.get():  # this run only; runs it starts register as usual
            unnamed_run.set(False)
        else:
            self.register(runner)
        events: list[Event] = []
        config = self.config(run_id, stream=stream, emit=self._emitter(run_id, events, on_event))
        if limits:
            config = config.with_overrides(**limits)
        config.events = events
        config.budget = Budget.open(
            self.max_cost_usd, job.max_cost_usd, parent=current_budget.get()
        )
        self.run_store.begin_run(run_id, redact(job.to_state()), runner=runner.name)
        _remember(self._live_jobs, run_id, job)
        parent = _current_run.get()  # a run started inside a run names it (durable fan-out too)
        link = {} if parent is None else {"parent_run_id": parent}
        config.emit(EventType.RUN_STARTED, runner.name, {"job_id": job.id, **link})
        return await self._complete(runner, config, runner.arun(config, job))

    def _claim_run_id(self, run_id: str | None) -> str:
        if run_id is None:
            return new_id()
        if not isinstance(run_id, str) or not run_id.strip() or unstorable_text(run_id):
            raise ConfigurationError(
                "run_id must be a non-empty string without a NUL character or a lone"
                f" surrogate (no store keeps one in an id), not {run_id!r}"
            )
        if run_id in self._starting:
            raise ConfigurationError(f"run {run_id!r} is already running on this desk")
        record = self.run_store.get_run(run_id)
        if record is not None:
            raise ConfigurationError(_run_id_taken(run_id, record.status))
        self._starting.add(run_id)
        return run_id

    def run(
        self,
        runner: Runner | Pregel[Any, Any, Any, Any],
        job: Job | str,
        *,
        stream: bool | None = None,
        on_event: EventListener | None = None,
        limits: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> Report:
        """Synchronous :meth:`arun`; raises ``EventLoopRunningError`` inside a running loop.

        Async event handlers started by the run have finished when it returns.
        """
        return run_sync(
            self.drained(
                lambda: self.arun(
                    runner, job, stream=stream, on_event=on_event, limits=limits, run_id=run_id
                )
            )
        )

    async def aresume(
        self,
        report_or_run_id: Report | str,
        decision: Any = None,
        *,
        runner: Runner | Pregel[Any, Any, Any, Any] | None = None,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Report:
        """Continue a paused run with ``decision`` (approval or user input).

        Works in a new process that opened the same storage: pass ``runner=`` or register
        the runner first. A paused turn of a session (:meth:`session`) resumes through its
        session, which saves the rest of the turn to its history, as
        :meth:`WorkerSession.aresume <deskwork.runtime.session.WorkerSession.aresume>` does.

        Raises:
            RunnerNotRegisteredError: the paused run's runner is unknown to this desk.
            ConfigurationError: ``report_or_run_id`` is neither a Report nor a string; or
                ``runner=`` is of another kind than the runner that paused the run, or the
                runner refuses the paused state (``check_resume``: a flow or graph changed
                since the pause): the run stays paused, resumable with the right runner;
                or a confirmation is answered with neither True, False, a text nor a mapping
                with an ``"approved"`` key, or a user input with an answer its tool's
                parameter does not take (``pending_action.answer_schema``); or the Report
                given is of an earlier pause than the one the run waits for now (its
                ``pending_action`` differs: a call made again would answer the next pause,
                which its caller never saw): the run stays paused.
        """
        run_id = (
            report_or_run_id.run_id if isinstance(report_or_run_id, Report) else report_or_run_id
        )
        if not isinstance(run_id, str):
            raise ConfigurationError(
                "resume needs the paused run's Report or its run id (a str), not"
                f" {type(run_id).__name__}"
            )
        state = self._paused_state(run_id)
        if isinstance(state, Report):
            return state
        runner = (
            (_as_runner(runner) if runner is not None else None)
            # else the exact runner that paused, in this process; else by name
            or self._live_runners.get(run_id)
            or self.get_runner(state.runner_type, state.runner_name)
        )
        if runner is None:
            raise RunnerNotRegisteredError(
                f"run {run_id} was paused by {state.runner_type} {state.runner_name!r}, which is"
                " not registered on this desk; pass runner=... or call desk.register(...)"
            )
        if runner.runner_type != state.runner_type:  # a wrong runner=...: the run stays paused
            raise ConfigurationError(
                f"run {run_id} was paused by {state.runner_type} {state.runner_name!r}; the"
                f" {runner.runner_type} {runner.name!r} given cannot resume it (the run stays"
                " paused)"
            )
        check = getattr(runner, "check_resume", None)
        if check is not None:
            check(state)  # a runner that changed since the pause refuses it: the run stays paused
        from deskwork.runtime._tool_step import (  # loaded by the first run
            check_answer,
            check_answered_action,
        )

        answered = report_or_run_id.pending_action if isinstance(report_or_run_id, Report) else None
        if answered is not None:  # the Report of an earlier pause: the run stays paused
            check_answered_action(run_id, state.pending_action, answered.action_id)
        check_answer(state.pending_action, decision)  # [False], 2: the run stays paused
        session = _paused_turn_session()(self, run_id, state.job, runner)
        if session is not None:  # a session's turn: the rest of it is saved to the session
            return await session.aresume(
                report_or_run_id, decision, stream=stream, on_event=on_event
            )
        # the claim is of the pause checked here, not one the run reached meanwhile
        action_id = state.pending_action.action_id if state.pending_action else None
        if self.durable and _durable().resume_as_workflow():
            resumed: Report = await _durable().aresume(
                self, run_id, decision, runner, stream, on_event, action_id
            )
            return resumed
        # everything that can fail comes before the claim: a resume that cannot start
        # leaves the run paused (resumable), never stuck in "running"
        events: list[Event] = []
        config = self.config(run_id, stream=stream, emit=self._emitter(run_id, events, on_event))
        job = self._live_jobs.get(run_id) or Job.from_state(state.job)
        spent = float(state.metrics.get("cost") or 0.0)
        config.budget = Budget.open(self.max_cost_usd, job.max_cost_usd, spent=spent)
        if not self.run_store.claim_paused(run_id, action_id):
            return _failed(run_id, [f"run {run_id} is no longer paused (resumed elsewhere?)"])
        events.extend(self.run_store.get_events(run_id))
        config.events = events
        live = self._live_states.pop(run_id, None)
        if live is not None and _stored_state(live)[0] == state:
            state = live  # this process paused it: resume with the unredacted state
        config.emit(EventType.RUN_RESUMED, runner.name, {})
        return await self._complete(runner, config, runner.aresume(config, state, decision, job))

    def resume(
        self,
        report_or_run_id: Report | str,
        decision: Any = None,
        *,
        runner: Runner | Pregel[Any, Any, Any, Any] | None = None,
        stream: bool | None = None,
        on_event: EventListener | None = None,
    ) -> Report:
        """Synchronous :meth:`aresume`."""
        return run_sync(
            self.drained(
                lambda: self.aresume(
                    report_or_run_id, decision, runner=runner, stream=stream, on_event=on_event
                )
            ),
            api="resume",
        )

    async def drained(self, start: Callable[[], Awaitable[Report]]) -> Report:
        """Await ``start()``, then the async event handlers it scheduled (for sync callers,
        whose loop does not run between calls)."""
        report = await start()
        await self.event_bus.await_pending()
        return report

    def _paused_state(self, run_id: str) -> RunState | Report:
        record = self.run_store.get_run(run_id)
        if record is None:
            return _failed(run_id, [f"unknown run {run_id!r}"])
        if record.status != "paused" or record.state is None:
            return _failed(run_id, [f"run {run_id} is {record.status}, not paused"])
        return record.state

    async def _complete(self, runner: Runner, config: RunConfig, work: Any) -> Report:
        import asyncio  # loaded by the first run, not by importing deskwork

        parent = _nested_usage.get()
        children: list[dict[str, Any]] = []
        token = _nested_usage.set(children)  # runs started inside this one report here
        budget_token = current_budget.set(config.budget)  # ... and charge this run's budget
        run_token = _current_run.set(config.run_id)  # ... and name it as their parent
        running = self._running.setdefault(config.run_id, config) is config
        try:
            report, state = await work
        except asyncio.CancelledError as exc:
            if self._ended_elsewhere(config.run_id, exc):
                return self._stored_end(config)
            cancelled = _failed(config.run_id, [CANCELLED])
            self._store_result(runner, config, cancelled, None)
            raise
        except Exception as exc:
            error = f"{describe_exception(exc)}"
            report, state = _failed(config.run_id, [error]), None
        finally:
            _nested_usage.reset(token)
            current_budget.reset(budget_token)
            _current_run.reset(run_token)
            if running:
                del self._running[config.run_id]
        if children:
            report.metrics = _with_nested(report.metrics, children)
            if state is not None:
                state = state.model_copy(update={"metrics": report.metrics})
        if parent is not None:
            parent.append({k: report.metrics[k] for k in _USAGE_KEYS if k in report.metrics})
        try:
            return self._store_result(runner, config, report, state)
        except asyncio.CancelledError as exc:
            if self._ended_elsewhere(config.run_id, exc):
                return self._stored_end(config)
            raise
        except Exception as exc:  # the store itself failed: still end with a failed report
            return self._store_failure(runner, config, report, exc)

    def _store_emitted(self, event: Event) -> None:
        """Store an event emitted on :attr:`event_bus` (a user's custom event; the desk's
        runs deliver theirs stored already) with the run it names, the payload redacted:
        while that run runs on this desk, in order with the run's events (in its report's
        too); once this desk stored the run's end (completed or failed; one of its last
        :data:`LIVE_CACHE_LIMIT` runs), after that end (``add_event_after_end``), unless its
        type starts with ``run.``: a log's last ``run.*`` event tells whether the run ended
        (the event stream of ``deskwork.serve`` reads it so). An event of no run of this
        desk, of a paused run or of a run another process ended is only delivered
        (``docs/stores.md``)."""
        run_id = event.run_id
        config = self._running.get(run_id)
        ended = self._ended.get(run_id, _NOT_ENDED)
        if config is None and ended is not _ENDED_HERE:
            return
        stored = event.model_copy(update={"payload": redact(event.payload)})
        with self._ending[hash(run_id) % _ENDING_STRIPES]:
            ended = self._ended.get(run_id, _NOT_ENDED)
            if ended is _ENDED_HERE:
                if not event.type.startswith("run."):  # the log's last run.* is its end
                    self.run_store.add_event_after_end(stored)
                return
            if ended is not _NOT_ENDED or config is None:
                return
            try:
                self.run_store.add_event(stored)
            except RunNotRunningError:  # ended elsewhere: the run's next event stops it
                _remember(self._ended, run_id, None)
                return
            config.events.append(stored)

    def _ended_elsewhere(self, run_id: str, exc: BaseException) -> bool:
        """Whether a ``CancelledError`` out of a run is the desk's own stop of a run whose
        record was ended meanwhile (by another process: its store refused a write), not a
        cancel of the caller's task (which still raises). A durable run's workflow then ends
        with that report too (a DBOS cancel or this process's shutdown stops it otherwise:
        they raise before the store, with no stop error and the run not in ``_ended``).

        The stop error itself tells it (a task awaited on the way keeps it): ``_ended`` is
        bounded and may have dropped the run while the error unwound."""
        import asyncio

        task = asyncio.current_task()
        if task is not None and task.cancelling() > 0:
            return False
        stopped = isinstance(exc, _run_stopped()) and getattr(exc, "run_id", None) == run_id
        return stopped or run_id in self._ended

    def _stored_end(self, config: RunConfig) -> Report:
        """The failed report of a run ended elsewhere: what its store holds (its status and
        events; none this desk emitted after that end, nor its own end)."""
        run_id = config.run_id
        record = self.run_store.get_run(run_id)
        status = "unknown" if record is None else record.status
        report = _failed(run_id, [f"run {run_id} was ended elsewhere (stored status: {status})"])
        report.events = self.run_store.get_events(run_id)
        self._live_jobs.pop(run_id, None)
        self._live_states.pop(run_id, None)
        self._live_runners.pop(run_id, None)
        return report

    def _store_failure(
        self, runner: Runner, config: RunConfig, report: Report, exc: Exception
    ) -> Report:
        error = f"storing the run's result failed: {describe_exception(exc)}"
        failed = _failed(config.run_id, [*report.errors, error])
        end = _RunEnd(config.run_id, "failed", None, None, None)
        with contextlib.suppress(Exception):  # best effort: the store may be unusable
            self._store_end(config.emit, runner.name, end, {"errors": failed.errors})
        if not end.stored:  # at least the record must not stay running
            with contextlib.suppress(Exception):
                self.run_store.update_run(config.run_id, "failed", None, None, None)
        self._live_jobs.pop(config.run_id, None)
        self._live_states.pop(config.run_id, None)
        self._live_runners.pop(config.run_id, None)
        failed.events = list(config.events)
        return failed

    def _store_result(
        self, runner: Runner, config: RunConfig, report: Report, state: RunState | None
    ) -> Report:
        """Store the run's end: its record and its one end event together (a record that
        cannot be stored fails the run instead, :meth:`_store_failure`, so no run has two end
        events)."""
        if report.status not in END_EVENT_BY_STATUS:  # a runner must end completed/paused/failed
            report = _failed(
                config.run_id, [f"runner {runner.name!r} ended with status {report.status!r}"]
            )
            state = None
        stored: RunState | None = None
        stored_json: str | None = None
        if state is not None:
            if state.status != report.status:  # a worker's state has its report's status
                state = state.model_copy(update={"status": report.status})
            stored, stored_json = _stored_state(state)
        payload: dict[str, Any] = {"errors": report.errors} if report.status == "failed" else {}
        output_json = None
        if report.data is not None:
            try:
                output_json = redact(to_jsonable(report.data))
            except (ValueError, RecursionError) as exc:  # keys 1 and "1"; data in itself
                payload["warnings"] = [_data_not_stored(runner.name, exc)]
        end = _RunEnd(
            config.run_id,
            report.status,
            None if report.content is None else redact_text(report.content),
            output_json,
            stored,
            state_json=stored_json,
        )
        self._store_end(config.emit, runner.name, end, payload)
        if report.status == "paused" and state is not None:
            _remember(self._live_states, config.run_id, state)
            _remember(self._live_runners, config.run_id, runner)
        else:
            self._live_jobs.pop(config.run_id, None)
            self._live_states.pop(config.run_id, None)
            self._live_runners.pop(config.run_id, None)
        report.events = list(config.events)
        return report

    def _store_end(
        self, emit: EventEmitter, source: str, end: _RunEnd, payload: dict[str, Any]
    ) -> None:
        """Emit the run's end event through ``emit``, the run's ``config.emit`` (past
        whatever guards it: a durable run's fence refuses the end of a run taken over
        elsewhere, and then nothing of it is stored); the desk's emitter stores ``end`` with
        it in one :meth:`RunStore.finish_run` (a run that ended meanwhile, here or in another
        process, keeps its end: ``asyncio.CancelledError``). An emitter that stores no event
        (a recovered run's replay of one stored before) leaves the record to be stored here
        alone."""
        token = _run_end.set(end)
        # the store keeps the state's JSON text made for its redaction, not a second dump
        state, text = end.state, end.state_json
        known = KNOWN_JSON.set(None if state is None or text is None else (state, text))
        try:
            emit(END_EVENT_BY_STATUS[end.status], source, payload)
        finally:
            KNOWN_JSON.reset(known)
            _run_end.reset(token)
        if not end.stored:
            self.run_store.update_run(
                end.run_id, end.status, end.output, end.output_json, end.state
            )

    def _cancel_paused(self, record: RunRecord, source: str = "desk") -> None:
        """End the paused run of ``record`` ``failed`` ("run cancelled") once this call has
        claimed its pause (:meth:`RunStore.claim_paused`), so no resume, here or in another
        process, runs its pending action after; the end is one write of the record with its
        event (:meth:`_store_end`).

        Raises:
            ConfigurationError: the claim lost: the run was resumed (or ended) meanwhile and
                is left as it is, not cancelled; or it ended elsewhere after the claim (that
                end stands).
        """
        run_id = record.run_id
        if not self.run_store.claim_paused(run_id):
            now = self.run_store.get_run(run_id)
            raise ConfigurationError(
                f"run {run_id} is no longer paused (it is {now.status if now else 'gone'}:"
                " resumed or ended meanwhile); it was not cancelled"
            )
        end = _RunEnd(run_id, "failed", record.output, record.output_json, None)
        try:
            self._store_end(self._emitter(run_id, [], None), source, end, {"errors": [CANCELLED]})
        except _run_stopped():
            message = f"run {run_id} ended meanwhile; it stays as it ended"
            raise ConfigurationError(message) from None

    # -- durable runs (Desk(durable=True); docs/durable.md) ------------------------------

    def submit(
        self,
        runner: Runner | Pregel[Any, Any, Any, Any],
        job: Job | str,
        *,
        queue: str = "default",
        priority: int | None = None,
        run_id: str | None = None,
        timeout: float | None = None,
    ) -> str:
        """Queue ``job`` for a durable worker (this process or ``deskwork worker``); returns
        the run id at once. ``priority`` is 1 .. 2**31 - 1; lower runs first, and runs
        without one before any with one. ``timeout`` (seconds, counted from when a worker
        starts the run) ends a run that runs longer ``failed`` ("run timed out"), at its
        next model or tool call.

        Raises:
            ConfigurationError: the desk is not durable, the database is unreachable, or
                ``job`` is ``None`` or a blank string.
            ValueError: a ``priority`` that is no whole number 1 .. 2**31 - 1, a
                ``timeout`` that is no number of seconds above 0 (at most 10**9), or a
                ``queue`` name that is blank or holds a NUL character or a lone surrogate.
        """
        job = job if isinstance(job, Job) else as_job(job)
        run_id = self._claim_run_id(run_id)
        self._starting.discard(run_id)
        submitted: str = self._durable_api().submit(
            self, _as_runner(runner), job, run_id, queue, priority, timeout
        )
        return submitted

    def queue(
        self,
        name: str,
        *,
        concurrency: int | None = None,
        worker_concurrency: int | None = None,
        model_requests_per_minute: int | None = None,
    ) -> QueueSettings:
        """Set the limits of the durable queue ``name``, for every worker process.

        The settings are stored in the database (DBOS's queue table) when this process
        starts durable work, or at once if it has; every worker reads them there. Declare
        them at import, next to ``desk.register(...)``.

        Args:
            name: the queue (``submit(..., queue=name)``, ``deskwork worker --queue name``).
            concurrency: runs of the queue at once, across all workers.
            worker_concurrency: runs of the queue at once in each worker process.
            model_requests_per_minute: model calls that runs of the queue may start in any
                rolling minute, across all workers; a call over the limit waits its turn.

        Raises:
            ConfigurationError: the desk is not durable.
            ValueError: a limit below 1, or ``worker_concurrency`` above ``concurrency``.
        """
        from deskwork.runtime._queues import QueueSettings

        settings = QueueSettings(name, concurrency, worker_concurrency, model_requests_per_minute)
        self._durable_api().declare_queue(self, settings)
        return settings

    async def aresult(self, run_id: str, timeout: float | None = None) -> Report:
        """Wait for the durable run ``run_id`` and return its report (``timeout=0``: look
        once, do not wait).

        Raises:
            TimeoutError: it did not end within ``timeout`` seconds.
            ConfigurationError: there is no durable run ``run_id``, or ``timeout`` is no
                number of seconds (NaN, infinity, below 0, a text).
        """
        report: Report = await self._durable_api().aresult(self, run_id, timeout)
        return report

    def result(self, run_id: str, timeout: float | None = None) -> Report:
        """Synchronous :meth:`aresult`."""
        return run_sync(self.aresult(run_id, timeout), api="result")

    def cancel(self, run_id: str) -> None:
        """Cancel a queued, running or paused durable run; it ends ``failed`` ("run
        cancelled"), and a paused one resumes no more (its pause is claimed first, as a
        resume claims it).

        Raises:
            ConfigurationError: there is no durable run ``run_id`` (nothing is stored); or
                the run was paused and a resume claimed it meanwhile (it goes on).
        """
        self._durable_api().cancel(self, run_id)

    async def arecover(self) -> list[Report]:
        """Continue every unfinished durable run of a dead process whose runner is
        registered here; their reports (``[]`` when nothing is unfinished)."""
        reports: list[Report] = await self._durable_api().arecover(self)
        return reports

    def recover(self) -> list[Report]:
        """Synchronous :meth:`arecover`."""
        return run_sync(self.arecover(), api="recover")

    def _durable_api(self) -> Any:
        if not self.durable:
            raise ConfigurationError("durable runs need Desk(durable=True)")
        return _durable()

    def close(self) -> None:
        """Release the stores this desk opened (SQLite connections); the desk is unusable after.

        Stores passed in by the caller are left open: the caller owns them. Sync tools still
        running (timed out, say) are not waited for: they end on their daemon threads.
        """
        self.closed = True
        if self.durable and "deskwork.runtime._durable" in sys.modules:
            sys.modules["deskwork.runtime._durable"].release(self)
        if self._tool_pool is not None:
            self._tool_pool.shutdown()
        for store in (self._run_store, self._session_store, self._memory_store):
            if store is not None and store not in self._given_stores:
                store.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- other entry points -----------------------------------------------------------

    def flow(self, steps: Sequence[Any], *, name: str = "flow") -> Any:
        """A workflow of steps run through this desk (see ``deskwork.workflow``)."""
        from deskwork.workflow import Flow

        return Flow(self, steps, name=name)

    def session(
        self,
        worker: Worker,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> WorkerSession | None:
        """Open (or create) a conversation with ``worker``.

        Returns ``None`` when ``session_id`` exists but belongs to another worker.
        """
        from deskwork.runtime.session import WorkerSession

        return WorkerSession.open(self, worker, session_id, metadata)


def _as_runner(runner: Runner | Pregel[Any, Any, Any, Any]) -> Runner:
    """A compiled LangGraph graph runs as ``GraphRunner(graph)``; other runners as they are,
    once their name is known to be a string (every entry point: run, submit, resume's
    ``runner=``), else its run would be stored, then fail on its first event and stay
    "running"."""
    if getattr(runner, "runner_type", None) is None and type(runner).__module__.startswith(
        "langgraph."
    ):
        from deskwork.graph.runner import GraphRunner

        return GraphRunner(runner)
    name = getattr(runner, "name", None)
    if not isinstance(name, str):
        raise ConfigurationError(f"a runner's name must be a string, not {name!r}")
    return runner  # type: ignore[return-value]  # a Runner (or misuse, failing in the run)


@cache
def _run_stopped() -> type[asyncio.CancelledError]:
    """The ``CancelledError`` by which the emitter stops a run whose store refused a write
    (made on first use: importing deskwork loads no asyncio)."""
    import asyncio

    class RunStoppedError(asyncio.CancelledError):
        """``run_id`` stopped by its desk: its record was ended elsewhere (a run started
        inside it, stopped so, is told apart)."""

        def __init__(self, run_id: str) -> None:
            super().__init__(f"run {run_id} has ended: it stores no more")
            self.run_id = run_id

    return RunStoppedError


@cache
def _run_config() -> type[RunConfig]:
    """``RunConfig``, imported by the first run (once: a from-import in every run cost
    ~1.5 us)."""
    from deskwork.runtime.config import RunConfig

    return RunConfig


@cache
def _paused_turn_session() -> Callable[..., WorkerSession | None]:
    """``session.paused_turn_session``, imported by the first resume."""
    from deskwork.runtime.session import paused_turn_session

    return paused_turn_session


def _durable() -> Any:
    """``deskwork.runtime._durable`` (imports DBOS: the ``dbos`` extra)."""
    require("dbos", "dbos")
    from deskwork.runtime import _durable as module

    return module


def _stored_state(state: RunState) -> tuple[RunState, str | None]:
    """``state`` as the run store keeps it: secrets in messages, tool calls, the job and the
    payload are redacted (the unredacted state stays in this process for resuming); with its
    JSON text when the redaction made it (``None`` when it changed the state)."""
    return redact_model_json(state)


_USAGE_KEYS = (
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost",
    "by_model",
)
_nested_usage: ContextVar[list[dict[str, Any]] | None] = ContextVar(
    "deskwork_nested_usage", default=None
)
_current_run: ContextVar[str | None] = ContextVar("deskwork_current_run", default=None)
"""The run whose runner is executing: a run started inside it records it as its parent."""
unnamed_run: ContextVar[bool] = ContextVar("deskwork_unnamed_run", default=False)
"""Set by a caller whose next run's runner must not enter the desk's name registry (a
subworker the model made: ``deskwork serve`` would expose it by name, and it would replace a
runner of the user's of that name); a paused one still resumes by its run id, in this
process (the desk keeps the exact runner of each paused run)."""


@dataclass(slots=True)
class _RunEnd:
    """A run's end record, on its way to the store with the run's end event."""

    run_id: str
    status: RunStatus
    output: str | None
    output_json: Any | None
    state: RunState | None
    stored: bool = False
    """Set by the desk's emitter once it stored the record with the end event."""
    state_json: str | None = None
    """``state.model_dump_json()``, when the desk has it (stores keep it: ``KNOWN_JSON``)."""


_run_end: ContextVar[_RunEnd | None] = ContextVar("deskwork_run_end", default=None)
"""The end record of the run whose end event is being emitted (``Desk._store_end``)."""

_FINAL_EVENTS = RUN_END_EVENTS - {EventType.RUN_PAUSED}
"""The end events after which a run stores nothing (a paused run goes on when resumed)."""

CANCELLED = "run cancelled"
"""The error of a run that a cancel ended ``failed``."""

_REOPENING_EVENTS = frozenset({EventType.RUN_RESUMED, EventType.RUN_RECOVERED})
_ENDED_HERE = True
"""``Desk._ended``'s value for a run whose end this desk stored (``None``: one another
process ended, whose run this desk stopped): only the first takes events after its end."""
_NOT_ENDED = object()
"""The events a run emits once its record is ``running`` again (claimed from its pause, or
recovered after its process died): they lift the desk's memory that it ended."""


def _with_nested(metrics: dict[str, Any], children: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics whose usage totals include runs started inside this run (e.g. subworkers)."""
    usage = sum_metrics(*(m for m in children))
    nested = {"nested_runs": metrics.get("nested_runs", 0) + len(children)}
    own = {k: metrics[k] for k in usage if k in metrics}
    return {**metrics, **sum_metrics(own, usage), **nested}


LIVE_CACHE_LIMIT = 1024
"""How many paused runs keep their exact in-process job and state (older ones resume from
the stored state, as a new process would)."""


_ENDING_STRIPES = 32
"""Locks that make an event's check against a desk's ended runs and its store one step (a run
id always maps to the same one)."""


def _remember(cache: OrderedDict[str, Any], key: str, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > LIVE_CACHE_LIMIT:
        cache.popitem(last=False)


def _run_id_taken(run_id: str, status: str) -> str:
    return (
        f"run {run_id!r} already exists (status {status}); a run id can be used once:"
        " resume a paused run with desk.resume, or choose a new id"
    )


def _data_not_stored(runner: str, exc: Exception) -> str:
    """The warning of a run whose ``report.data`` has no JSON form (two keys of one dict
    that are one JSON key, data that contains itself): the run keeps its status and content,
    its stored ``output_json`` is null; logged on ``deskwork.runtime`` too."""
    from deskwork._logs import get_stdlib_logger  # only for such a run

    reason = "it contains itself" if isinstance(exc, RecursionError) else str(exc)
    note = f"runner {runner!r} ended with data that was not stored (output_json is null): {reason}"
    get_stdlib_logger("deskwork.runtime").warning(note)
    return note


def _failed(run_id: str, errors: list[str]) -> Report:
    return Report(run_id=run_id, status="failed", errors=errors)
