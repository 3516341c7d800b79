"""``deskwork worker MODULE:ATTR``: a process that serves a durable desk's queue.

The worker imports ``MODULE`` (from the working directory or ``PYTHONPATH``), takes the desk
at ``ATTR`` (a ``Desk(durable=True)``, or a function returning one), stores the queue's
limits (``--concurrency``, ``--queue-concurrency``, ``--rate``, over what the desk declares
with ``desk.queue``), hands the unfinished runs of dead processes back to their queues (it
runs its share), then runs queued runs until SIGINT/SIGTERM, looking for runs of workers
that died every ``--takeover-every`` seconds. Runs it still holds when it stops are taken
over by another worker or by ``recover()``.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from deskwork._logs import get_stdlib_logger
from deskwork.cli import _target
from deskwork.exceptions import ConfigurationError
from deskwork.utils import is_number

__all__ = ["add_worker_parser", "load_desk", "run_worker", "serve"]

TAKEOVER_SECONDS = 5.0
_log = get_stdlib_logger("deskwork.worker")


def load_desk(target: str) -> Any:
    """The durable desk at ``MODULE:ATTR``.

    Raises:
        ConfigurationError: the target is malformed, missing, or not a durable desk.
    """
    return _target.load_desk(target, durable=True)


def serve(
    target: str,
    *,
    queue: str = "default",
    concurrency: int | None = None,
    drain: int = 10,
    queue_concurrency: int | None = None,
    rate: int | None = None,
    takeover_every: float = TAKEOVER_SECONDS,
) -> int:
    """Serve ``queue`` for the desk at ``target`` until SIGINT/SIGTERM; the exit code.

    ``concurrency`` (runs at once in each worker), ``queue_concurrency`` (across all workers)
    and ``rate`` (model requests per minute, across all workers) are stored with the queue
    in the database; a flag changes only its own limit. Every ``takeover_every``
    seconds the worker takes over the runs of workers that died (their executor lock is
    free). On a signal it stops taking runs, waits up to ``drain`` seconds for the runs it
    holds, and leaves the rest unfinished for another worker or ``recover()``.
    """
    problem = (
        _bad_limits(concurrency, queue_concurrency, rate)
        or _bad_every(takeover_every)
        or _bad_queue(queue)
        or ("--drain must be 0 or more seconds" if drain < 0 else "")
        or _off_main_thread()
    )
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    with _environ("DESKWORK_QUEUES", queue):  # read when DBOS launches: serve only this queue
        return _serve(target, queue, concurrency, drain, queue_concurrency, rate, takeover_every)


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    """``os.environ[name] = value`` while the block runs, then as it was: a worker run in a
    process that goes on (a test, an application) does not leave later desks serving only
    its queue."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def _serve(
    target: str,
    queue: str,
    concurrency: int | None,
    drain: int,
    queue_concurrency: int | None,
    rate: int | None,
    takeover_every: float,
) -> int:
    try:
        desk = load_desk(target)
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from deskwork.runtime import _durable

    with _stopped_by_signals() as stop:  # before the engine starts: it is always released
        drain_seconds = 0  # refused before serving: no run of this worker to wait for
        try:
            executor_id, recovered = _start(desk, queue, concurrency, queue_concurrency, rate)
            print(
                f"deskwork worker {executor_id}: serving queue {queue!r}"
                f" (recovered {len(recovered)} runs)",
                flush=True,
            )
            _take_over_until(stop, desk, takeover_every)
            drain_seconds = drain
        except (ConfigurationError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            try:
                _durable.release(desk, drain_seconds=drain_seconds)
            finally:
                desk.close()
    return 0


def _start(
    desk: Any, queue: str, concurrency: int | None, across: int | None, rate: int | None
) -> tuple[str, list[str]]:
    """Start serving ``queue`` (its limits stored first); this worker's executor id and the
    runs of dead workers it handed back."""
    from deskwork.runtime import _dbos_queue, _durable

    engine = _durable.engine_for(desk, queues=[])  # serve nothing until configured
    settings = _settings(_durable, queue, concurrency, across, rate)
    if settings is not None:
        _durable.declare_queue(desk, settings)
    engine.queue(queue)
    engine.listen([queue])
    # idle: polled up to every 0.45 s, not 0.2 s; so is the queue of recovered runs,
    # whose poller here is woken when this worker hands runs back
    _dbos_queue.back_off_while_idle(queue)
    _dbos_queue.back_off_while_idle(_dbos_queue.RECOVERY_QUEUE)
    return engine.executor_id, _hand_back(desk)  # this worker's queue threads run them


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[threading.Event]:
    """An event SIGINT and SIGTERM set while the block runs; then their handlers are as they
    were: a worker run in a process that goes on (a test, an application) left Ctrl-C
    setting its dead event, and the process could no longer be interrupted."""
    stop = threading.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.getsignal(signum) for signum in signals}
    for signum in signals:
        signal.signal(signum, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            # None: a handler Python did not install (an embedding host's); the default then
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _off_main_thread() -> str:
    """Why the worker cannot serve from this thread (only the main thread can take the
    signals that stop it: off it, installing them failed after the engine had started, and
    the desk was never released), or ``""``."""
    if threading.current_thread() is threading.main_thread():
        return ""
    return "a worker stops on SIGINT/SIGTERM, so it serves only from the main thread"


def _bad_limits(*limits: int | None) -> str:
    names = ("--concurrency", "--queue-concurrency", "--rate")
    for name, value in zip(names, limits, strict=True):
        if value is not None and value < 1:
            return f"{name} must be >= 1"
    return ""


def _bad_every(seconds: float) -> str:
    """Why ``--takeover-every`` cannot be waited on (infinity failed the worker after it
    had started serving), or ``""``."""
    if is_number(seconds) and 0 <= seconds < math.inf:
        return ""
    return "--takeover-every must be a number of seconds, 0 or more (0: only at start)"


def _bad_queue(queue: str) -> str:
    """Why ``--queue`` names no queue a run can be submitted to (a blank name was served,
    while ``desk.submit`` refuses it), or ``""``."""
    from deskwork.runtime._queues import check_queue_name

    try:
        check_queue_name(queue)
    except ValueError as exc:
        return f"--queue: {exc}"
    return ""


def _settings(
    durable: Any, queue: str, concurrency: int | None, across: int | None, rate: int | None
) -> Any:
    """The queue's settings with the command line's flags over them: the flags given change
    only their own limit; the others stay as stored (by ``desk.queue`` or other workers).
    ``None`` when no flag is given."""
    if concurrency is None and across is None and rate is None:
        return None
    stored = durable.stored_settings(queue)
    return durable.QueueSettings(
        queue,
        concurrency=across if across is not None else stored.concurrency,
        worker_concurrency=concurrency if concurrency is not None else stored.worker_concurrency,
        model_requests_per_minute=rate if rate is not None else stored.model_requests_per_minute,
    )


def _hand_back(desk: Any) -> list[str]:
    """Hand the runs of dead workers back (to DBOS's recovery queue); this worker's poller of
    that queue looks at once."""
    from deskwork.runtime import _dbos_queue, _durable

    taken: list[str] = _durable.hand_back(desk)
    if taken:
        _dbos_queue.wake(_dbos_queue.RECOVERY_QUEUE)
    return taken


def _take_over_until(stop: threading.Event, desk: Any, every: float) -> None:
    """Until ``stop``: every ``every`` seconds, hand the runs of dead workers back to their
    queues (a dead worker's executor lock is free; a live one's never is)."""
    while not stop.wait(every if every > 0 else None):
        try:
            taken = _hand_back(desk)
        except Exception as exc:  # the database may be briefly unreachable: try again later
            _log.warning("taking over the runs of dead workers failed: %s", exc)
            continue
        if taken:
            _log.warning("took over %d runs of dead workers", len(taken))


def add_worker_parser(sub: Any) -> None:
    """``deskwork worker MODULE:ATTR [--queue NAME] [--concurrency N] [--rate N] ...``."""
    worker = sub.add_parser("worker", help="serve a durable desk's queue (MODULE:ATTR)")
    worker.add_argument("target", help="the Desk(durable=True), for example myapp:desk")
    worker.add_argument("--queue", default="default", help="the queue to serve (default)")
    worker.add_argument("--concurrency", type=int, help="runs at once in each worker")
    worker.add_argument(
        "--queue-concurrency", type=int, help="runs of the queue at once across all workers"
    )
    worker.add_argument(
        "--rate",
        type=int,
        help="model requests per minute for the queue's runs, across all workers",
    )
    worker.add_argument(
        "--takeover-every",
        type=float,
        default=TAKEOVER_SECONDS,
        help="seconds between looks for runs of dead workers to take over (0: only at start)",
    )
    worker.add_argument(
        "--drain",
        type=int,
        default=10,
        help="on SIGTERM, seconds to let running runs finish (the rest are recovered later)",
    )


def run_worker(args: Any) -> int:
    """Run the ``worker`` command."""
    return serve(
        args.target,
        queue=args.queue,
        concurrency=args.concurrency,
        drain=args.drain,
        queue_concurrency=args.queue_concurrency,
        rate=args.rate,
        takeover_every=args.takeover_every,
    )
