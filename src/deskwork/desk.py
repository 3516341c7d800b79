"""``deskwork.desk``: documented import path for :class:`Desk`."""

from deskwork.runtime.desk import Desk

__all__ = ["Desk"]
