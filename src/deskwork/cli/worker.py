"""``deskwork worker MODULE:ATTR``: a process that serves a durable desk's queue.

The worker imports ``MODULE`` (from the working directory or ``PYTHONPATH``), takes the desk
at ``ATTR`` (a ``Desk(durable=True)``, or a function returning one), hands the unfinished runs
of dead processes back to their queues (it runs its share), then runs queued runs until
SIGINT/SIGTERM. Runs it still holds when it stops are taken over by another worker or by
``recover()``.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from typing import Any

from deskwork.exceptions import ConfigurationError

__all__ = ["add_worker_parser", "load_desk", "run_worker", "serve"]


def load_desk(target: str) -> Any:
    """The durable desk at ``MODULE:ATTR``.

    Raises:
        ConfigurationError: the target is malformed, missing, or not a durable desk.
    """
    from deskwork.runtime.desk import Desk

    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"expected MODULE:ATTR (for example app:desk), not {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r}: {exc}") from exc
    value = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ConfigurationError(f"{module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    desk = value() if callable(value) and not isinstance(value, Desk) else value
    if not isinstance(desk, Desk) or not desk.durable:
        raise ConfigurationError(f"{target} is not a Desk(durable=True)")
    return desk


def serve(
    target: str, *, queue: str = "default", concurrency: int | None = None, drain: int = 10
) -> int:
    """Serve ``queue`` for the desk at ``target`` until SIGINT/SIGTERM; the exit code.

    On a signal the worker stops taking runs, waits up to ``drain`` seconds for the runs it
    holds, and leaves the rest unfinished for another worker or ``recover()``.
    """
    if concurrency is not None and concurrency < 1:
        print("error: --concurrency must be >= 1", file=sys.stderr)
        return 2
    os.environ["DESKWORK_QUEUES"] = queue  # read when DBOS launches: serve only this queue
    try:
        desk = load_desk(target)
        from deskwork.runtime import _durable

        engine = _durable.engine_for(desk, queues=[])  # serve nothing until configured
        engine.queue(queue, concurrency)
        engine.listen([queue])
        recovered = _durable.hand_back(desk)  # this worker's queue threads run them
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print(
        f"deskwork worker {engine.executor_id}: serving queue {queue!r}"
        f" (recovered {len(recovered)} runs)",
        flush=True,
    )
    stop.wait()
    _durable.release(desk, drain_seconds=drain)
    desk.close()
    return 0


def add_worker_parser(sub: Any) -> None:
    """``deskwork worker MODULE:ATTR [--queue NAME] [--concurrency N]``."""
    worker = sub.add_parser("worker", help="serve a durable desk's queue (MODULE:ATTR)")
    worker.add_argument("target", help="the Desk(durable=True), for example myapp:desk")
    worker.add_argument("--queue", default="default", help="the queue to serve (default)")
    worker.add_argument("--concurrency", type=int, help="runs at once in each worker")
    worker.add_argument(
        "--drain",
        type=int,
        default=10,
        help="on SIGTERM, seconds to let running runs finish (the rest are recovered later)",
    )


def run_worker(args: Any) -> int:
    """Run the ``worker`` command."""
    return serve(args.target, queue=args.queue, concurrency=args.concurrency, drain=args.drain)
