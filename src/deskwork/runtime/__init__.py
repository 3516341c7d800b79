"""The worker loop, context compaction, Desk and sessions."""

from deskwork.runtime.config import EventEmitter, RunConfig
from deskwork.runtime.desk import Desk
from deskwork.runtime.runner import Runner
from deskwork.runtime.session import WorkerSession
from deskwork.runtime.worker import Worker

__all__ = ["Desk", "EventEmitter", "RunConfig", "Runner", "Worker", "WorkerSession"]
