"""``deskwork.worker``: documented import path for :class:`Worker`."""

from deskwork.runtime.worker import Worker

__all__ = ["Worker"]
