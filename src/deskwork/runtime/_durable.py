"""Durable runs on DBOS Transact: what ``Desk(durable=True)`` adds.

Where DBOS sits::

    desk.arun / desk.submit ──► DBOS workflow "deskwork.run" (workflow id = run id)
                                   │  runner.arun(config, job)   (the runner is unchanged)
                                   ├─ model call ──► DBOS step "deskwork.model:<model>:<who>"
                                   └─ tool call  ──► DBOS step "deskwork.tool:<name>:<call>"
                          (the seams are in ``_durable_steps``)

A step's result is checkpointed in DBOS's system tables; when a crashed run is recovered the
workflow runs again from the top and every finished step returns its recorded result instead
of running, so a finished tool call never runs twice and the model is not asked again.
Events the replay emits a second time are recognised and dropped (``_durable_steps.Replay``),
so the stored events read as one run with a ``run.recovered`` event where it picked up.

DBOS is a process-wide singleton: one durable database per process (:class:`_Engine`). Each
process has its own executor id and holds the executor lock of ``_executor_lock``, which is how
``recover()`` knows a dead executor's runs may be taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from deskwork._logs import get_stdlib_logger
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.core.event import END_EVENT_BY_STATUS, RUN_END_EVENTS, Event, EventType
from deskwork.core.job import Job, unnamed_schema_class
from deskwork.core.redact import describe_exception, redact, redact_model, redact_text
from deskwork.core.report import Report
from deskwork.exceptions import ConfigurationError, RunnerNotRegisteredError
from deskwork.runtime._budget import Budget, current_budget
from deskwork.runtime._dbos_prepared import (
    first_execution,
    prepare_step_statements,
    resume_ids,
    workflow_state,
)
from deskwork.runtime._dbos_queue import (
    poll_when_runs_end,
    prepare_claim_statements,
    skip_empty_claims,
)
from deskwork.runtime._dbos_sqlite import claim_under_write_lock
from deskwork.runtime._durable_fanout import member_of, parent_link
from deskwork.runtime._durable_steps import (
    DurableAdapter,
    Replay,
    StepFailedError,
    carried_events,
    in_run,
    in_workflow,
    tool_step,
)
from deskwork.runtime._durable_versions import code_digest, pinned_version, refusal
from deskwork.runtime._executor_lock import ExecutorLock, open_executor_lock
from deskwork.runtime._fence import Fence
from deskwork.runtime._queues import (
    GATE_SUFFIX,
    INTEGER_MAX,
    MODEL_RATE_PERIOD_SECONDS,
    QueueSettings,
    check_queue_name,
)
from deskwork.runtime.desk import CANCELLED
from deskwork.store._errors import unstorable_text
from deskwork.store._url import is_postgres, redact_url, scrub, sqlite_path
from deskwork.tools._step_hook import tool_step_hook
from deskwork.utils import check_seconds, is_integer, is_number

if TYPE_CHECKING:
    from deskwork.runtime.config import EventEmitter, RunConfig
    from deskwork.runtime.desk import Desk
    from deskwork.runtime.runner import Runner

from dbos import DBOS, SetEnqueueOptions, SetWorkflowID, SetWorkflowTimeout
from dbos._error import DBOSWorkflowCancelledError

__all__ = [
    "RUN_RECOVERED",
    "RUN_UNRECOVERABLE",
    "WORKFLOW_NAME",
    "DurableAdapter",
    "QueueSettings",
    "StepFailedError",
    "adapter_for",
    "cancel_in_database",
    "declare_queue",
    "engine_for",
    "gate_name",
    "in_run",
    "stored_settings",
]

WORKFLOW_NAME = "deskwork.run"
ADMIT_NAME = "deskwork.admit"
"""The workflow that admits one model call of a rate-limited queue (see :func:`gate_name`)."""
RUN_RECOVERED = EventType.RUN_RECOVERED
"""Emitted when a recovered run picks up (after the events it had stored before)."""
RUN_UNRECOVERABLE = EventType.RUN_UNRECOVERABLE
"""Emitted (once) when ``recover()`` cannot continue a run; its payload says why."""
APP_NAME = "deskwork"
QUEUE_POLL_SECONDS = 0.2
GATE_POLL_SECONDS = 0.1
MAX_PRIORITY = INTEGER_MAX
MAX_TIMEOUT_SECONDS = 10**9
"""The longest run ``timeout`` (~31 years): DBOS keeps its deadline in epoch milliseconds, a
database ``bigint`` (1e300 s raised the driver's overflow error)."""
RESULT_POLL_SECONDS = 0.05
_DONE = {"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"}
_log = get_stdlib_logger("deskwork.durable")


# -- the workflow ---------------------------------------------------------------------------


@DBOS.workflow(name=WORKFLOW_NAME)
async def _run_workflow(request: dict[str, Any]) -> dict[str, Any]:
    """One durable run (registered at import, under a stable name, before DBOS launches)."""
    return await _execute(request)


_live_reports: dict[str, Report] = {}
"""Reports of runs that finished in this process (exact objects, for the caller here)."""


async def _execute(request: dict[str, Any]) -> dict[str, Any]:
    run_id: str = request["run_id"]
    resuming = request.get("mode") == "resume"
    # a run this process has just started has no record yet: no read (_dbos_prepared)
    fresh = first_execution(request.get("workflow_id", run_id)) and not resuming
    desk, root = _engine().find(request["runner_type"], request["runner_name"], run_id)
    runner = member_of(root, request)  # a fanned-out member: below the root (_durable_fanout)
    if desk is None or runner is None:
        raise RunnerNotRegisteredError(
            f"run {run_id}: {request['runner_type']} {request['runner_name']!r} is not"
            " registered on a durable desk of this process"
        )
    record = None if fresh else desk.run_store.get_run(run_id)
    if record is not None and record.status != "running" and not resuming:
        _announce_end(desk, run_id, record.status, runner.name)
        report = _report_from_store(desk, run_id)  # it ended before DBOS recorded the end
        return _dump(report)
    token = tool_step_hook.set(tool_step)
    try:
        with carried_events(desk.run_store, _engine().database_url):  # one round trip each
            if request.get("mode") == "resume":
                report = await _resume(desk, runner, request)
            else:
                report = await _run(desk, runner, request, recovered=record is not None)
    except BaseException:  # DBOS stops a cancelled or timed-out workflow at its next step
        if not _stopping.is_set():
            await _end_if_cancelled(desk, run_id, request.get("workflow_id", run_id))
        raise
    finally:
        tool_step_hook.reset(token)
        _forget_given(run_id)  # a paused run keeps it in desk._live_runners
    if request.get("caller") == DBOS.executor_id:  # the caller awaits it in this process
        _live_reports[run_id] = report
    return _dump(report)


def _announce_end(desk: Desk, run_id: str, status: str, source: str) -> None:
    """Emit the end event of a run whose record ended without one: its process stopped
    between the two (``Desk._store_result`` stores the record first)."""
    end = END_EVENT_BY_STATUS.get(status)
    events = desk.run_store.get_events(run_id)
    begun = (EventType.RUN_STARTED, EventType.RUN_RESUMED)
    last = max((n for n, e in enumerate(events) if e.type in begun), default=-1)
    if end is None or any(e.type in RUN_END_EVENTS for e in events[last + 1 :]):
        return
    payload: dict[str, Any] = {"errors": []} if end == EventType.RUN_FAILED else {}
    desk._emitter(run_id, events, None)(end, source, payload)


_listeners: dict[str, Callable[[Event], None]] = {}
"""``on_event`` listeners of runs started by ``desk.arun`` in this process."""


_stopping = threading.Event()
"""Set while this process stops DBOS: the runs it cancels stay unfinished (for recovery)."""


def _guarded(emit: EventEmitter, workflow_id: str) -> EventEmitter:
    """``emit``, except while the process stops: a run cancelled by the shutdown must not
    store a ``failed`` end; it stays ``running`` and another process recovers it. Behind
    the fence of ``_fence`` when the executor lock can be lost: a run whose process may
    have lost it waits, and one taken over meanwhile stops (DBOS parks it)."""
    fence = _engine().fence
    owns = _owner_check(workflow_id)
    seen = [fence.losses if fence is not None else 0]

    def guarded(event_type: str, source: str, payload: dict[str, Any]) -> None:
        if _stopping.is_set():
            raise asyncio.CancelledError("deskwork is stopping this process")
        if fence is not None:
            losses = fence.admit(seen[0], owns)
            if losses is None:
                raise DBOSWorkflowCancelledError(f"{workflow_id} was taken over elsewhere")
            seen[0] = losses
        emit(event_type, source, payload)

    return guarded


def _owner_check(workflow_id: str) -> Callable[[], bool]:
    """Whether this execution still owns ``workflow_id`` (DBOS's ownership token, which
    a process that takes the workflow over replaces). Private DBOS API: without it, or
    outside the workflow, the answer is "no" (the run stops rather than run twice)."""
    try:
        from dbos._context import current_owner_xid
        from dbos._datasource import _still_owns
    except ImportError:  # pragma: no cover - another DBOS version
        return lambda: False
    token = current_owner_xid(workflow_id)
    if token is None:
        return lambda: False
    return lambda: _still_owns(workflow_id, token)


def _run_config(
    desk: Desk, run_id: str, request: dict[str, Any], events: list[Event], emit: EventEmitter
) -> RunConfig:
    workflow_id = request.get("workflow_id", run_id)
    # this run's gate (or none), for its adapter and the runs started inside it (a tool's
    # subworker): set in the run's own task, so it reaches no other run
    _gate.set(request.get("gate"))
    config = desk.config(run_id, stream=request.get("stream"), emit=_guarded(emit, workflow_id))
    if request.get("limits"):
        config = config.with_overrides(**request["limits"])
    config.events = events
    return config


# -- rate limits: each model call admitted by a rate-limited DBOS queue ------------------------


def gate_name(queue: str) -> str:
    """The DBOS queue that admits the model calls of runs on ``queue``. Its DBOS limiter
    (``model_requests_per_minute`` per 60 s) is counted in the database, across every
    worker, so the limit holds however many processes serve ``queue``."""
    return f"{queue}{GATE_SUFFIX}"


@DBOS.workflow(name=ADMIT_NAME)
async def _admit_workflow() -> None:
    """One model call admitted: starting this workflow is what the gate's limiter counts."""


_gate: contextvars.ContextVar[str | None] = contextvars.ContextVar("deskwork_gate", default=None)
"""The admission queue of the rate-limited run this code runs in (``None``: none)."""


def adapter_for(inner: BaseModelAdapter) -> DurableAdapter:
    """The adapter of a durable desk's run: gated inside a run on a rate-limited queue, so
    the model calls of a subworker that a tool spawns count toward the queue's limit."""
    gate = _gate.get()
    return DurableAdapter(inner) if gate is None else RateGatedAdapter(inner, gate)


def _admit_outside(gate: str) -> None:
    """Admit one model call from a thread without the caller's DBOS context: inside a
    step, the admission is a workflow of its own (not checkpointed, as the step is not)."""
    admitted: object = DBOS.enqueue_workflow(gate, _admit_workflow).get_result()
    del admitted  # the workflow returns nothing: that it ran is the admission


class RateGatedAdapter(DurableAdapter):
    """A :class:`DurableAdapter` whose every call inside a durable run first waits for
    admission on the rate-limited queue ``gate``: a child workflow enqueued there, which a
    worker starts only when the queue's limiter has room. The admission is checkpointed
    like any child workflow, so a recovered run does not wait (or count) twice."""

    def __init__(self, inner: BaseModelAdapter, gate: str) -> None:
        super().__init__(inner)
        self.gate = gate

    async def _admitted(self) -> None:
        if in_workflow():
            handle = await DBOS.enqueue_workflow_async(self.gate, _admit_workflow)
            await handle.get_result()
        elif in_run():  # inside a step: a subworker's call (run_in_executor copies no context)
            await asyncio.get_running_loop().run_in_executor(None, _admit_outside, self.gate)

    async def acomplete(self, **params: Any) -> Any:
        await self._admitted()
        return await super().acomplete(**params)

    async def astructured_complete(self, **params: Any) -> ModelResponse:
        await self._admitted()
        return await super().astructured_complete(**params)


async def _run(desk: Desk, runner: Runner, request: dict[str, Any], *, recovered: bool) -> Report:
    run_id = request["run_id"]
    # the job as given when this process started the run (a TypeAdapter or a class in a
    # function as its schema, tool objects): its stored form keeps only import paths and names
    job = desk._live_jobs.get(run_id) or Job.from_state(request["job"])
    events: list[Event] = desk.run_store.get_events(run_id) if recovered else []
    inner = desk._emitter(run_id, events, _listeners.pop(run_id, None))
    emit = Replay(events).wrap(inner) if recovered else inner
    config = _run_config(desk, run_id, request, events, emit)
    config.budget = Budget.open(desk.max_cost_usd, job.max_cost_usd, parent=current_budget.get())
    if not recovered:
        desk.run_store.begin_run(run_id, redact(job.to_state()), runner=runner.name)
    if not any(e.type == EventType.RUN_STARTED for e in events):  # killed between the two
        emit(EventType.RUN_STARTED, runner.name, {"job_id": job.id, **parent_link(request)})
    if recovered:
        inner(RUN_RECOVERED, runner.name, {"executor_id": DBOS.executor_id})
    return await desk._complete(runner, config, runner.arun(config, job))


def resume_as_workflow() -> bool:
    """Whether ``desk.aresume`` should start a resume workflow (not inside a durable run)."""
    return not in_run()


async def _first_execution() -> bool:
    """``True`` the first time a workflow passes here; ``False`` when it is being recovered
    (the step's recorded result comes back without its body running)."""
    ran: list[bool] = []

    async def mark() -> bool:
        ran.append(True)
        return True

    await DBOS.run_step_async({"name": "deskwork.begin"}, mark)
    return bool(ran)


async def _resume(desk: Desk, runner: Runner, request: dict[str, Any]) -> Report:
    """A resume workflow. The first time it claims the pause (``RunStore.claim_paused``:
    one process wins) and continues the run; after a crash, the claimed run continues from
    its stored paused state, with the events it had stored kept once."""
    run_id, decision = request["run_id"], request["decision"]
    first = await _first_execution()
    record = desk.run_store.get_run(run_id)
    fresh = first or (record is not None and record.status == "paused")  # not claimed yet
    if record is None or record.state is None or record.status not in ("paused", "running"):
        return _report_from_store(desk, run_id)
    if fresh and not desk.run_store.claim_paused(run_id, request.get("action_id")):
        return Report(
            run_id=run_id,
            status="failed",
            errors=[f"run {run_id} is no longer paused (resumed elsewhere?)"],
        )
    state = record.state
    live = desk._live_states.pop(run_id, None)
    if fresh and live is not None and redact_model(live) == state:
        state = live  # this process paused it: resume with the unredacted state
    job = desk._live_jobs.get(run_id) or Job.from_state(state.job)
    events = desk.run_store.get_events(run_id)
    listener = _listeners.pop(request["workflow_id"], None)
    inner = desk._emitter(run_id, events, listener)
    emit = inner if fresh else Replay(events).wrap(inner)
    config = _run_config(desk, run_id, request, events, emit)
    spent = float(state.metrics.get("cost") or 0.0)
    config.budget = Budget.open(desk.max_cost_usd, job.max_cost_usd, spent=spent)
    if fresh:
        config.emit(EventType.RUN_RESUMED, runner.name, {})
    else:
        inner(RUN_RECOVERED, runner.name, {"executor_id": DBOS.executor_id})
    return await desk._complete(runner, config, runner.aresume(config, state, decision, job))


async def aresume(
    desk: Desk,
    run_id: str,
    decision: Any,
    runner: Runner,
    stream: bool | None,
    on_event: Callable[[Event], None] | None,
    action_id: str | None = None,
) -> Report:
    """Resume a paused durable run as a DBOS workflow (``<run id>.resume.<n>``): a crash
    while it continues is recovered like a run, and two processes resuming the same pause
    share one workflow, so the pause is resumed once; ``action_id``: only while the run
    waits for that action (``RunStore.claim_paused``)."""
    engine_for(desk)
    await _on_loop()
    if desk._live_runners.get(run_id) is not runner:
        desk.register(runner)  # by name: recovery in another process finds it so
        _engine().given[run_id] = (desk, runner)  # this very runner resumes it here
    resumes = sum(1 for e in desk.run_store.get_events(run_id) if e.type == EventType.RUN_RESUMED)
    workflow_id = f"{run_id}.resume.{resumes + 1}"
    request = {
        "run_id": run_id,
        "workflow_id": workflow_id,
        "mode": "resume",
        "runner_type": runner.runner_type,
        "runner_name": runner.name,
        "decision": decision,
        "action_id": action_id,
        "stream": stream,
        "caller": DBOS.executor_id,
    }
    if on_event is not None:
        _listeners[workflow_id] = on_event
    try:
        with SetWorkflowID(workflow_id):
            handle = await DBOS.start_workflow_async(_run_workflow, request)
        await handle.get_result()
    except Exception as exc:
        return _failed_run(desk, run_id, exc)
    finally:
        _forget_given(run_id)
    return _finished(desk, run_id)


def _dump(report: Report) -> dict[str, Any]:
    """The workflow's recorded output (the report itself is read from the run store)."""
    return {"run_id": report.run_id, "status": report.status}


def _report_from_store(desk: Desk, run_id: str) -> Report:
    record = desk.run_store.get_run(run_id)
    events = desk.run_store.get_events(run_id)
    if record is None:
        return Report(run_id=run_id, status="failed", errors=[f"unknown run {run_id!r}"])
    errors: list[str] = []
    for event in events:
        if event.type == EventType.RUN_FAILED:
            errors = [str(e) for e in event.payload.get("errors", [])]
    state = record.state
    return Report(
        run_id=run_id,
        status=record.status,
        content=record.output,
        data=record.output_json,
        errors=errors,
        events=events,
        # the stored state is redacted: secrets in it do not come back
        metrics=state.metrics if state is not None else {},
        messages=state.messages if state is not None else [],
        tool_calls=state.tool_calls if state is not None else [],
        pending_action=state.pending_action if state is not None else None,
    )


# -- the process-wide engine ----------------------------------------------------------------


def _system_url(database_url: str) -> str:
    """DBOS's system database: the desk's PostgreSQL database (schema ``dbos``), or a SQLite
    file beside the desk's (``deskwork.dbos.db``) so the two never contend for one file lock."""
    if is_postgres(database_url):
        return database_url
    path = sqlite_path(database_url)
    assert path is not None
    return f"sqlite:///{path.with_name(path.stem + '.dbos' + path.suffix)}"


def _wal(system_url: str) -> None:
    """Put DBOS's SQLite system database in WAL mode (stored in the file): a commit is one
    appended WAL frame instead of a rollback journal's several synced writes."""
    import sqlite3

    path = sqlite_path(system_url)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")


def _fast_internal_queue() -> None:
    """Poll DBOS's internal queue (where recovered runs go) as often as ours, not every 1 s."""
    try:  # private DBOS API: without it, recovery just waits up to DBOS's default 1 s
        from dbos._dbos import _get_or_create_dbos_registry

        queue = _get_or_create_dbos_registry().get_internal_queue()
        queue._polling_interval_sec = QUEUE_POLL_SECONDS
    except (ImportError, AttributeError):  # pragma: no cover - another DBOS version
        _log.debug("DBOS internal queue polling left at its default")


def _new_executor_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


_LAUNCH_ATTEMPTS = 4
"""Launches tried while another process holds the SQLite file (migrations, WAL switch)."""
SWEEP_FLOOR = 256
"""Queued runs whose runners a process keeps before it first looks which have ended."""
SWEEP_READ = 10_000
"""Run ids a sweep reads the statuses of in one statement (PostgreSQL's driver sends at most
65,535 parameters: a backlog of more queued runs failed every submit)."""


class _Engine:
    """DBOS launched on one database for this process, and the durable desks using it."""

    def __init__(self, database_url: str, queues: list[str] | None) -> None:
        self.database_url = database_url
        self.executor_id = os.environ.get("DESKWORK_EXECUTOR_ID") or _new_executor_id()
        self.desks: weakref.WeakSet[Desk] = weakref.WeakSet()
        self.lock: ExecutorLock = open_executor_lock(database_url)
        self.queues: set[str] = set()
        self.app_name = os.environ.get("DESKWORK_APP_NAME", APP_NAME)
        self.fence: Fence | None = None
        self.given: dict[str, tuple[Desk, Runner]] = {}
        """The runners given to runs this process started, resumes or queued on a queue it
        serves, by run id, until the run ends here (or ``result``/``cancel`` here sees it
        end): two runners of one name (one made per request) each run their own runs."""
        self.queued: set[str] = set()
        """The run ids in :attr:`given` by ``submit``: another process may run and end them,
        so they are swept (:meth:`sweep`) once they double."""
        self.sweep_at = SWEEP_FLOOR
        self.sweeping = threading.Lock()
        """Held while a submit keeps a runner and sweeps (submits may come from threads)."""
        for attempt in range(_LAUNCH_ATTEMPTS):
            try:
                self._launch(queues)
                return
            except ConfigurationError as exc:  # workers started together on one SQLite file
                if "database is locked" not in str(exc) or attempt == _LAUNCH_ATTEMPTS - 1:
                    raise
                time.sleep(0.5 * (attempt + 1))

    def _launch(self, queues: list[str] | None) -> None:
        url = self.database_url
        path = sqlite_path(url)
        config: Any = {
            "name": self.app_name,
            "system_database_url": _system_url(url),
            "executor_id": self.executor_id,
            "application_version": pinned_version(),  # else DBOS's (docs/durable.md)
            "log_level": os.environ.get("DESKWORK_DBOS_LOG_LEVEL", "WARNING"),
            "notification_listener_polling_interval_sec": 0.1,
            # DBOS's notifier thread wakes every coalesce interval (0.01 s: 100 times a
            # second in every process) to push its LISTEN/NOTIFY wakeups, which only DBOS's
            # own messages, events and streams use (deskwork none): at 0.05 s an idle
            # worker's notifier costs ~0.5 ms CPU/s instead of ~2.5
            "notification_coalesce_sec": 0.05,
            # no "SELECT 1" round trip before each system-database call (DBOS's default
            # pool_pre_ping): DBOS retries a call that fails on a dropped connection itself
            # (db_retry), so a server restart costs one retry, not a round trip per call
            "db_engine_kwargs": {"pool_pre_ping": False},
        }
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.lock.hold(self.executor_id)
            _wal(_system_url(url))
            claim_under_write_lock()  # queue limits hold on SQLite too (_dbos_sqlite)
            prepare_step_statements()  # a step's checkpoint SQL built once (_dbos_prepared)
            skip_empty_claims()  # an idle poll is one read, not a claim (_dbos_queue)
            prepare_claim_statements()  # the claim's SQL built once (_dbos_queue)
            poll_when_runs_end()  # a free slot takes the next run at once (_dbos_queue)
            # DBOS logs step outputs and inputs it fails on ("dbos": its one logger): the
            # same redaction as deskwork's own loggers (deskwork._logs)
            get_stdlib_logger("dbos")
            DBOS(config=config)
            _fast_internal_queue()
            if queues is not None:
                DBOS.listen_queues(queues)
            DBOS.launch()
            if self.lock.can_be_lost:  # a database session: watch it (_fence)
                self.fence = Fence(self.lock, self.executor_id)
                self.fence.start()
        except Exception as exc:
            self.lock.release()
            with contextlib.suppress(Exception):
                DBOS.destroy()
            if isinstance(exc, ConfigurationError):
                raise
            raise ConfigurationError(
                f"cannot start durable runs on {redact_url(url)}:"
                f" {type(exc).__name__}: {scrub(redact_text(str(exc)), url)}"
            ) from exc

    def find(
        self, runner_type: str, runner_name: str, run_id: str | None = None
    ) -> tuple[Desk | None, Runner | None]:
        """The desk and runner of a run: the exact runner ``run_id`` was given in this process
        (:attr:`given`), or that paused it here (one not registered by name, as a model-made
        subworker), else the runner registered under that name."""
        given = self.given.get(run_id) if run_id is not None else None
        if given is not None and (given[1].runner_type, given[1].name) == (
            runner_type,
            runner_name,
        ):
            return given
        desks = list(self.desks)
        for desk in desks:
            live = desk._live_runners.get(run_id) if run_id is not None else None
            if live is not None and (live.runner_type, live.name) == (runner_type, runner_name):
                return desk, live
        for desk in desks:
            runner = desk.get_runner(runner_type, runner_name)
            if runner is not None:
                return desk, runner
        return (desks[0] if desks else None), None

    def keep_queued(self, run_id: str, desk: Desk, runner: Runner) -> None:
        """Keep the runner of a run queued here (:attr:`given`) until it ends; a sweep when
        the queued runs have doubled keeps the table as large as the runs not ended (an API
        server that only submits, whose runs other workers end, would keep every one)."""
        with self.sweeping:
            self.given[run_id] = (desk, runner)
            self.queued.add(run_id)
            if len(self.queued) >= self.sweep_at:
                try:  # housekeeping: a failed read must not fail the submit
                    self.sweep()
                except Exception as exc:
                    _log.warning(
                        "durable: sweeping the runners of queued runs failed (the next submit"
                        " tries again): %s",
                        describe_exception(exc),
                    )

    def sweep(self) -> None:
        """Forget the queued runs whose workflow has ended (one read of their statuses), and
        those already forgotten (:func:`_forget_given`); under :attr:`sweeping`."""
        known = list(self.queued)
        ids = [run_id for run_id in known if run_id in self.given]
        gone = set(known) - set(ids)
        for start in range(0, len(ids), SWEEP_READ):  # a statement takes 65,535 parameters
            ended = DBOS.list_workflows(
                workflow_ids=ids[start : start + SWEEP_READ],
                status=sorted(_DONE),
                load_input=False,
                load_output=False,
            )
            gone.update(status.workflow_id for status in ended)
        for run_id in gone:
            self.given.pop(run_id, None)
        self.queued -= gone
        self.sweep_at = max(SWEEP_FLOOR, 2 * len(self.queued))

    def queue(self, name: str) -> None:
        """Make sure ``name`` exists in the database: the declared settings of this process
        if it has any (:func:`declare_queue`), else the stored ones (or none)."""
        if name in self.queues:
            return
        declared = _declared.get(name)
        if declared is not None:
            self.configure(declared)
            return
        DBOS.register_queue(
            name, polling_interval_sec=QUEUE_POLL_SECONDS, on_conflict="never_update"
        )
        self.queues.add(name)

    def configure(self, settings: QueueSettings) -> None:
        """Store ``settings`` in the database (every worker reads them there), with the
        rate-limited admission queue of its model calls (:func:`gate_name`)."""
        DBOS.register_queue(
            settings.name,
            global_concurrency=settings.concurrency,
            worker_concurrency=settings.worker_concurrency,
            polling_interval_sec=QUEUE_POLL_SECONDS,
            on_conflict="always_update",
        )
        self.queues.add(settings.name)
        gate, rpm = gate_name(settings.name), settings.model_requests_per_minute
        if rpm is not None or DBOS.retrieve_queue(gate) is not None:
            DBOS.register_queue(
                gate,
                limiter=None
                if rpm is None
                else {"limit": rpm, "period": MODEL_RATE_PERIOD_SECONDS},
                polling_interval_sec=GATE_POLL_SECONDS,
                on_conflict="always_update",
            )

    def configure_all(self, declared: list[QueueSettings]) -> None:
        for settings in declared:
            self.configure(settings)

    def listen(self, queues: list[str]) -> None:
        """Start serving ``queues`` and the admission queues of their model calls (after
        their settings are stored: they apply from the first run this process takes)."""
        _dbos()._listening_queues = _with_gates(queues)

    def shutdown(self, drain_seconds: int = 0) -> None:
        """Stop DBOS: wait up to ``drain_seconds`` for running runs, then cancel the rest
        (they stay unfinished: another process or ``recover()`` continues them)."""
        # runs still going when the drain ends are cancelled: from then on they store nothing
        timer = threading.Timer(max(0.0, drain_seconds - 0.5), _stopping.set)
        timer.start()
        try:
            with contextlib.suppress(Exception):
                DBOS.destroy(workflow_completion_timeout_sec=drain_seconds)
        finally:
            timer.cancel()
            _stopping.clear()
        if self.fence is not None:
            self.fence.stop()
        self.lock.release()
        _restore_loops()


_loops: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
"""Event loops whose default executor DBOS replaced with its own (shut down with DBOS)."""


async def _on_loop() -> None:
    """Use DBOS's thread pool for ``asyncio.to_thread`` on this loop while DBOS runs (as DBOS
    does itself), and remember the loop to give it a pool of its own when DBOS stops."""
    _loops.add(asyncio.get_running_loop())
    await DBOS._configure_asyncio_thread_pool()


def _restore_loops() -> None:
    for loop in list(_loops):
        if not loop.is_closed():
            loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix="asyncio"))
    _loops.clear()


def _env_queues() -> list[str] | None:
    """``$DESKWORK_QUEUES``: the queues this process serves (comma-separated; empty: none;
    unset: all)."""
    raw = os.environ.get("DESKWORK_QUEUES")
    if raw is None:
        return None
    return _with_gates([name.strip() for name in raw.split(",") if name.strip()])


def stored_settings(name: str) -> QueueSettings:
    """The settings of queue ``name`` in the database now (none set: no limits)."""
    queue, gate = DBOS.retrieve_queue(name), DBOS.retrieve_queue(gate_name(name))
    limiter = gate.limiter if gate is not None else None
    return QueueSettings(
        name,
        concurrency=queue.global_concurrency if queue is not None else None,
        worker_concurrency=queue.worker_concurrency if queue is not None else None,
        model_requests_per_minute=int(limiter["limit"]) if limiter else None,
    )


def _with_gates(queues: list[str]) -> list[str]:
    """``queues`` and their admission queues: a process that runs a queue's runs also
    admits their model calls (a run waiting for admission needs a process to admit it)."""
    return [*queues, *(gate_name(q) for q in queues)]


_declared: dict[str, QueueSettings] = {}
"""Queue settings declared in this process (``desk.queue``), stored when DBOS runs."""


def declare_queue(desk: Desk, settings: QueueSettings) -> None:
    """Declare ``settings`` for this process; they are stored in the database now if DBOS
    runs, else when it starts (the last process to store a queue's settings sets them)."""
    _declared[settings.name] = settings
    with _engine_lock:
        engine = _current[0] if _current else None
    if engine is not None:
        _off_loop(lambda: engine.configure(settings))


_engine_lock = threading.Lock()
_current: list[_Engine] = []


def _forget_given(run_id: str) -> None:
    """Drop the runner given to ``run_id`` (:attr:`_Engine.given`); nothing while DBOS stops
    (the engine is gone: a run it cancels must stay unfinished, not fail on this)."""
    if _current:
        _current[0].given.pop(run_id, None)
        _current[0].queued.discard(run_id)


def _engine() -> _Engine:
    if not _current:
        raise ConfigurationError("no durable desk in this process")
    return _current[0]


def engine_for(desk: Desk, *, queues: list[str] | None = None) -> _Engine:
    """The engine of ``desk``'s database, launching DBOS on first use.

    Raises:
        ConfigurationError: ``desk`` is closed, another durable database is in use in this
            process, or the database cannot be reached.
    """
    if desk.closed:  # else DBOS started again and took queued runs its closed stores fail
        raise ConfigurationError("this desk is closed: it runs no more durable work")
    with _engine_lock:
        if _current and _current[0].database_url != desk.database_url:
            if any(d is not desk for d in _current[0].desks):
                used = redact_url(_current[0].database_url)
                raise ConfigurationError(
                    f"this process already runs durable runs on {used}; one durable database"
                    " per process"
                )
            _current.pop().shutdown()
        if not _current:
            engine = _Engine(desk.database_url, _env_queues() if queues is None else queues)
            _current.append(engine)
            _off_loop(lambda: engine.configure_all(list(_declared.values())))
        engine = _current[0]
        engine.desks.add(desk)
        return engine


def release(desk: Desk, *, drain_seconds: int = 0) -> None:
    """Forget ``desk``; the last durable desk of the process shuts DBOS down (after up to
    ``drain_seconds`` for running runs to end)."""
    with _engine_lock:
        if not _current:
            return
        engine = _current[0]
        engine.desks.discard(desk)
        for run_id, (owner, _) in list(engine.given.items()):
            if owner is desk:
                del engine.given[run_id]
                engine.queued.discard(run_id)
        if not list(engine.desks):
            _current.pop().shutdown(drain_seconds)


# -- desk operations ------------------------------------------------------------------------


def check_schema(job: Job) -> None:
    """Refuse a job whose response schema is (or holds) a class Python cannot find by its
    name (:func:`~deskwork.core.job.unnamed_schema_class`: defined inside a function, made
    by ``create_model``, reloaded since): DBOS records each model call's result by pickling
    it, which fails for that class's instances, so the run failed at its first model call
    with a pickling error.

    Raises:
        ConfigurationError: naming the class, before anything is stored or queued.
    """
    unnamed = unnamed_schema_class(job.response_schema)
    if unnamed is not None:
        raise ConfigurationError(
            f"the job's response_schema uses {unnamed.__module__}.{unnamed.__qualname__}, a"
            " class Python cannot find by that name (defined inside a function, made by"
            " create_model, or redefined or reloaded since): a durable run records each"
            " model call's result (pickled), and Python can pickle only instances of a class"
            f" it can import by name; define {unnamed.__name__} at module level, under that"
            " name"
        )


def _request(
    run_id: str, runner: Runner, job: Job, stream: bool | None, limits: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "runner_type": runner.runner_type,
        "runner_name": runner.name,
        "code": code_digest(runner),  # recover() refuses other code (_durable_versions)
        "job": job.to_state(),
        "stream": stream,
        "limits": limits or None,
    }


async def arun(
    desk: Desk,
    runner: Runner,
    job: Job,
    run_id: str,
    stream: bool | None,
    limits: dict[str, Any] | None,
    on_event: Callable[[Event], None] | None = None,
) -> Report:
    """Run ``job`` as a DBOS workflow in this process and wait for its report."""
    check_schema(job)
    engine = engine_for(desk)
    await _on_loop()
    desk.register(runner)  # by name: recovery in another process finds it so
    if on_event is not None:
        _listeners[run_id] = on_event
    from deskwork.runtime.desk import _remember  # desk.py imports this module

    _remember(desk._live_jobs, run_id, job)  # as Desk._start does: for _run and a resume here
    engine.given[run_id] = (desk, runner)  # not another runner of its name (find)
    request = {**_request(run_id, runner, job, stream, limits), "caller": DBOS.executor_id}
    try:
        with SetWorkflowID(run_id):
            handle = await DBOS.start_workflow_async(_run_workflow, request)
        await handle.get_result()
    except Exception as exc:  # the workflow itself failed (not the run: that is a report)
        return _failed_run(desk, run_id, exc)
    finally:
        _forget_given(run_id)
    return _finished(desk, run_id)


def submit(
    desk: Desk,
    runner: Runner,
    job: Job,
    run_id: str,
    queue: str,
    priority: int | None,
    timeout: float | None = None,
) -> str:
    """Enqueue ``job`` on ``queue``; returns ``run_id`` at once.

    Raises:
        ValueError: ``priority`` is not 1 .. 2**31 - 1, ``queue`` is empty, or ``timeout``
            is not a positive number of seconds.
        ConfigurationError: the job's response schema cannot be loaded from its stored form
            (a ``TypeAdapter``, a class defined in a function): a worker could not run it.
    """
    if priority is not None and not (is_integer(priority) and 1 <= priority <= MAX_PRIORITY):
        raise ValueError(
            f"priority must be a whole number 1 .. {MAX_PRIORITY} (lower runs first),"
            f" not {priority!r}"
        )
    check_queue_name(queue)
    check_seconds(timeout, "timeout")
    check_schema(job)
    if timeout is not None and timeout > MAX_TIMEOUT_SECONDS:
        raise ConfigurationError(
            f"timeout must be at most {MAX_TIMEOUT_SECONDS} seconds, got {timeout!r}"
        )
    engine = engine_for(desk)
    desk.register(runner)  # by name: a worker process finds it so
    request = {**_request(run_id, runner, job, None, None), "queue": queue, "timeout": timeout}
    Job.from_state(request["job"])  # a worker runs the stored form: its schema must load

    def enqueue() -> None:
        engine.queue(queue)
        if _serves(queue):  # it may run here: with this runner, not another of its name
            engine.keep_queued(run_id, desk, runner)
        request["gate"] = gate_name(queue) if _rate_limited(queue) else None
        limit = SetWorkflowTimeout(timeout) if timeout is not None else contextlib.nullcontext()
        with SetWorkflowID(run_id), SetEnqueueOptions(priority=priority), limit:
            DBOS.enqueue_workflow(queue, _run_workflow, request)

    _off_loop(enqueue)
    return run_id


def _serves(queue: str) -> bool:
    """Whether this process runs queued runs of ``queue`` (``$DESKWORK_QUEUES``, ``deskwork
    worker --queue``)."""
    listening: list[str] | None = _dbos()._listening_queues
    return listening is None or queue in listening


def _rate_limited(queue: str) -> bool:
    """Whether ``queue`` has a model-request limit in the database now (the run keeps the
    answer in its input, so a recovered run passes the same gates)."""
    gate = DBOS.retrieve_queue(gate_name(queue))
    return gate is not None and gate.limiter is not None


def _off_loop(call: Callable[[], Any]) -> Any:
    """``call()``; on a thread of its own when this thread runs an event loop (DBOS's
    blocking calls refuse to run on one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call()
    with ThreadPoolExecutor(1, thread_name_prefix="deskwork-durable") as pool:
        return pool.submit(contextvars.copy_context().run, call).result()


async def aresult(desk: Desk, run_id: str, timeout: float | None) -> Report:
    """Wait for the durable run ``run_id`` (started here or elsewhere) and return its report.

    Raises:
        TimeoutError: it did not end within ``timeout`` seconds.
        ConfigurationError: there is no durable run ``run_id``, or ``timeout`` is neither
            ``None``, 0 (look once) nor a finite number of seconds above 0.
    """
    if not (is_number(timeout) and timeout == 0):  # NaN waited for ever
        check_seconds(timeout, "timeout")
    _check_known(run_id)
    engine_for(desk)
    await _on_loop()
    workflow_id = await asyncio.to_thread(_latest_workflow, run_id)
    return await _await_workflow(desk, run_id, workflow_id, timeout)


def _check_known(run_id: object) -> None:
    """Raise the error of an unknown run for an id no durable run can have: no text, or one
    with a NUL character or a lone surrogate (no database keeps one; PostgreSQL raised its
    driver's error when asked, and an id with a surrogate could not even be sent)."""
    if not isinstance(run_id, str) or unstorable_text(run_id):
        raise ConfigurationError(f"no durable run {run_id!r}")


def _latest_workflow(run_id: str) -> str:
    """The workflow that carries ``run_id`` now: the run's, or its latest resume's."""
    numbers = [int(workflow_id.rsplit(".", 1)[1]) for workflow_id in resume_ids(run_id)]
    return f"{run_id}.resume.{max(numbers)}" if numbers else run_id


async def _await_workflow(
    desk: Desk, run_id: str, workflow_id: str, timeout: float | None
) -> Report:
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while True:
        state = await asyncio.to_thread(workflow_state, workflow_id)  # a cheap poll
        if state is None:
            raise ConfigurationError(f"no durable run {run_id!r}")
        if state in _DONE:
            _forget_given(run_id)  # it ended elsewhere: it runs here no more
            break
        if deadline is not None and loop.time() >= deadline:
            raise TimeoutError(f"run {run_id} did not end within {timeout} s")
        await asyncio.sleep(RESULT_POLL_SECONDS)
    if state == "SUCCESS":
        return _finished(desk, run_id)
    status = await asyncio.to_thread(DBOS.get_workflow_status, workflow_id)
    if status is None:
        raise ConfigurationError(f"no durable run {run_id!r}")
    if status.status == "CANCELLED":
        return _end_run(desk, run_id, _stop_reason(status))
    if status.status != "SUCCESS":
        return _failed_run(desk, run_id, status.error)
    return _finished(desk, run_id)


def _finished(desk: Desk, run_id: str) -> Report:
    live = _live_reports.pop(run_id, None)
    if live is not None:
        return live
    return _report_from_store(desk, run_id)


def _failed_run(desk: Desk, run_id: str, error: Any) -> Report:
    """A workflow that raised (a runner not registered where it ran, say): the run fails."""
    message = f"{describe_exception(error)}" if error else "failed"
    return _end_run(desk, run_id, message)


def _end_run(desk: Desk, run_id: str, message: str) -> Report:
    """End ``run_id`` ``failed`` with ``message`` if its record is missing (a queued run) or
    ``running``; its report (a paused one ends by ``Desk._cancel_paused``, which claims it).

    The end goes the desk's end path: one conditional write of the record with its event
    (``RunStore.finish_run``), so a run that ends between the read here and that write, in
    this process or another, keeps its own end (the emitter refuses this one)."""
    record = desk.run_store.get_run(run_id)
    if record is None and not desk.run_store.reserve_run(run_id, None):
        record = desk.run_store.get_run(run_id)  # a worker recorded it meanwhile: that stands
    if record is None or record.status == "running":
        from deskwork.runtime.desk import _RunEnd

        end = _RunEnd(run_id, "failed", None, None, None)
        with contextlib.suppress(asyncio.CancelledError):  # it ended meanwhile: that end stands
            desk._store_end(desk._emitter(run_id, [], None), "desk", end, {"errors": [message]})
    report = _report_from_store(desk, run_id)
    if not report.errors:
        report.errors = [message]
    return report


_CLOCK_MS = 1000
"""The precision of DBOS's end times on SQLite (whole seconds)."""


def _stop_reason(status: Any) -> str:
    """Why DBOS cancelled a workflow: its timeout (it ended at or after its deadline, give
    or take the database clock's precision) or a cancel. (``desk.cancel`` and ``deskwork
    runs fail`` also fail the run in the store themselves, with their own reason.)"""
    deadline, timeout_ms = status.workflow_deadline_epoch_ms, status.workflow_timeout_ms
    ended = status.completed_at or status.updated_at or 0
    if deadline is not None and timeout_ms is not None and ended + _CLOCK_MS > deadline:
        return f"run timed out: it ran longer than its timeout of {timeout_ms / 1000:g} s"
    return CANCELLED


async def _end_if_cancelled(desk: Desk, run_id: str, workflow_id: str) -> None:
    """After the workflow of ``run_id`` was stopped mid-run: if DBOS cancelled it (a cancel
    or its timeout), end the run ``failed`` with the reason, so the store never keeps a
    cancelled run ``running``. Anything else leaves it alone.

    The status is read on a thread without the workflow's DBOS context (``run_in_executor``
    copies no context): read inside the workflow it would be a recorded step, and a
    recovered run would no longer replay."""
    loop = asyncio.get_running_loop()
    with contextlib.suppress(Exception):
        status = await loop.run_in_executor(None, DBOS.get_workflow_status, workflow_id)
        if status is not None and status.status == "CANCELLED":
            await loop.run_in_executor(None, _end_run, desk, run_id, _stop_reason(status))


def cancel(desk: Desk, run_id: str) -> None:
    """Cancel a queued, running or paused durable run: a running one stops at its next step;
    each ends ``failed`` ("run cancelled"). A paused one's pause is claimed first, as a
    resume does, so no resume (here or in another process) runs its pending action after.
    Its child workflows (model-call admissions, fanned-out members) are cancelled with it.

    Raises:
        ConfigurationError: there is no durable run ``run_id`` (nothing is stored); or the
            run was paused and a resume claimed it meanwhile: it goes on, not cancelled.
    """
    _check_known(run_id)
    engine_for(desk)
    _forget_given(run_id)  # a queued run: it runs nowhere now
    if _cancel_if_paused(desk, run_id):  # claimed before anything: no resume can start
        return
    found = _off_loop(lambda: _cancel_workflows(run_id))
    if not found and desk.run_store.get_run(run_id) is None:
        raise ConfigurationError(f"no durable run {run_id!r}")
    if not _cancel_if_paused(desk, run_id):  # (it paused before the cancel reached it)
        _end_run(desk, run_id, CANCELLED)


def _cancel_if_paused(desk: Desk, run_id: str) -> bool:
    """End ``run_id`` as cancelled if it is paused, claiming its pause first
    (``Desk._cancel_paused``); whether it was paused."""
    record = desk.run_store.get_run(run_id)
    if record is None or record.status != "paused":
        return False
    desk._cancel_paused(record)
    return True


def _cancel_workflows(run_id: str) -> bool:
    """Cancel the workflows of ``run_id`` (its own and its latest resume's) with their
    children; whether it has any."""
    found = {run_id, _latest_workflow(run_id)}
    workflow_ids = sorted(w for w in found if workflow_state(w) is not None)
    if workflow_ids:
        DBOS.cancel_workflows(workflow_ids, cancel_children=True)
    return bool(workflow_ids)


def cancel_in_database(database_url: str, run_id: str) -> bool:
    """Cancel the DBOS workflows of ``run_id`` (and their children) in the durable
    database at ``database_url``, from a process that runs no durable desk (``deskwork runs
    fail``); ``False`` when that database holds no durable workflow of ``run_id``."""
    from dbos import DBOSClient

    path = sqlite_path(_system_url(database_url))
    if path is not None and not path.exists():
        return False
    client = DBOSClient(system_database_url=_system_url(database_url))
    try:
        found = client.list_workflows(
            workflow_ids=[run_id], load_input=False, load_output=False
        ) + client.list_workflows(
            workflow_id_prefix=f"{run_id}.resume.", load_input=False, load_output=False
        )
        if not found:
            return False
        client.cancel_workflows([w.workflow_id for w in found], cancel_children=True)
        return True
    finally:
        client.destroy()


# -- recovery -------------------------------------------------------------------------------


async def arecover(desk: Desk) -> list[Report]:
    """Continue every unfinished durable run of dead executors whose runner is registered,
    and wait for their reports. A run that was queued goes back to its queue (a worker
    serving it, or this process, runs it); any other run to DBOS's internal queue, which
    every durable process serves."""
    engine = engine_for(desk)
    await _on_loop()
    taken = await asyncio.to_thread(_take_over, desk, engine)
    return [await _await_workflow(desk, run_id, wf_id, None) for run_id, wf_id in taken]


def hand_back(desk: Desk) -> list[str]:
    """Like :func:`arecover`, without waiting: the run ids handed back to their queues."""
    return [run_id for run_id, _ in _take_over(desk, engine_for(desk))]


def _take_over(desk: Desk, engine: _Engine) -> list[tuple[str, str]]:
    """``(run id, workflow id)`` of each run taken over from a dead executor."""
    from dbos._recovery import _recover_workflow
    from dbos._sys_db import GetPendingWorkflowsOutput

    pending = DBOS.list_workflows(
        status="PENDING",
        name=[WORKFLOW_NAME, ADMIT_NAME],
        application_name=engine.app_name,
        load_output=False,
    )
    by_executor: dict[str, list[Any]] = {}
    for status in pending:
        if status.executor_id != engine.executor_id:
            by_executor.setdefault(status.executor_id or "local", []).append(status)
    taken: list[tuple[str, str]] = []
    dbos = _dbos()
    for executor_id, statuses in by_executor.items():
        with engine.lock.take_over(executor_id) as dead:
            if not dead:
                continue
            for status in statuses:
                target = GetPendingWorkflowsOutput(workflow_id=status.workflow_id, shard_key=None)
                if status.name == ADMIT_NAME:  # an admission: back to its rate-limited queue
                    _recover_workflow(dbos, target, [executor_id])
                    continue
                request = _request_of(status)
                runner = None if request is None else engine.find(*_runner_key(request))[1]
                if request is None or runner is None:
                    run_id = request["run_id"] if request else status.workflow_id
                    _mark_unrecoverable(desk, run_id, request)
                    continue
                why = refusal(status.app_version, request, runner)  # other code: not here
                if why is not None:
                    _mark_unrecoverable(desk, request["run_id"], request, why)
                    continue
                _recover_workflow(dbos, target, [executor_id])
                taken.append((request["run_id"], status.workflow_id))
    return taken


def _runner_key(request: dict[str, Any]) -> tuple[str, str]:
    return request["runner_type"], request["runner_name"]


def _dbos() -> Any:
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()


def _request_of(status: Any) -> dict[str, Any] | None:
    inputs = status.input or {}
    args = inputs.get("args") or ()
    return args[0] if args and isinstance(args[0], dict) else None


def _mark_unrecoverable(
    desk: Desk, run_id: str, request: dict[str, Any] | None, reason: str | None = None
) -> None:
    """Leave the run as it is (``recover()`` continues it once its runner is registered, or
    in a process of its version) and say why, once: an event, and a warning in the log."""
    if request is None:
        reason = reason or "its workflow input is unreadable"
    else:
        reason = reason or (
            f"{request['runner_type']} {request['runner_name']!r} is not registered on this"
            " desk (desk.register(...) it and call recover() again, or desk.cancel(run_id)"
            " / deskwork runs fail to end it)"
        )
    _log.warning("durable run %s cannot be recovered: %s", run_id, reason)
    events = desk.run_store.get_events(run_id)
    record = desk.run_store.get_run(run_id)
    if record is None or record.status != "running":  # ended before DBOS recorded it
        return
    if events and events[-1].type == RUN_UNRECOVERABLE:
        return
    desk._emitter(run_id, [], None)(RUN_UNRECOVERABLE, "desk", {"reason": reason})
