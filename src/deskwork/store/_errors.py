"""Errors raised by the stores (defined in :mod:`deskwork.exceptions`, the one exception tree)."""

from __future__ import annotations

from deskwork.exceptions import StoreError

__all__ = ["StoreError", "closed_store"]


def closed_store(location: str | None) -> StoreError:
    """The error of every call to a store after its ``close()``, the same on every store
    (``location``: its file or password-free URL; ``None`` for one in memory): one clear
    answer instead of the driver's own (``sqlite3.ProgrammingError``, or a closed pool taken
    for an unreachable server)."""
    where = f"the store at {location}" if location else "the in-memory store"
    return StoreError(f"{where} is closed: it takes no more calls", location=location)
