"""The worker loop, context compaction, Desk and sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.runtime.config import EventEmitter, RunConfig
from deskwork.runtime.desk import Desk
from deskwork.runtime.runner import Runner
from deskwork.runtime.worker import Worker

if TYPE_CHECKING:
    from deskwork.runtime.session import WorkerSession

__all__ = ["Desk", "EventEmitter", "RunConfig", "Runner", "Worker", "WorkerSession"]


def __getattr__(name: str) -> Any:
    if name == "WorkerSession":
        from deskwork.runtime.session import WorkerSession

        return WorkerSession
    raise AttributeError(f"module 'deskwork.runtime' has no attribute {name!r}")
