"""The worker loop, context compaction, Desk and sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.runtime._queues import QueueSettings
    from deskwork.runtime.config import EventEmitter, RunConfig
    from deskwork.runtime.desk import Desk
    from deskwork.runtime.runner import Runner
    from deskwork.runtime.session import WorkerSession
    from deskwork.runtime.worker import Worker

__all__ = [
    "Desk",
    "EventEmitter",
    "QueueSettings",
    "RunConfig",
    "Runner",
    "Worker",
    "WorkerSession",
]

_LAZY = {
    "Desk": "deskwork.runtime.desk",
    "EventEmitter": "deskwork.runtime.config",
    "QueueSettings": "deskwork.runtime._queues",
    "RunConfig": "deskwork.runtime.config",
    "Runner": "deskwork.runtime.runner",
    "Worker": "deskwork.runtime.worker",
    "WorkerSession": "deskwork.runtime.session",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
