"""A stored value damaged in place (bad JSON, a record that no longer validates, a bad
timestamp) is a :class:`StoreError` that says which value, not a raw parser traceback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from deskwork.store._errors import StoreError

__all__ = ["decoding"]


@contextmanager
def decoding(what: str, damaged: Callable[[str], StoreError]) -> Iterator[None]:
    """Turn a ``ValueError`` raised while reading ``what`` into ``damaged(problem)``.

    Args:
        what: the value being read, e.g. ``"run r1"`` (the problem starts with it).
        damaged: builds the store's error (naming its database) from the problem.
    """
    try:
        yield
    except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError are ValueErrors
        text = str(exc)
        first_line = text.splitlines()[0] if text else ""
        raise damaged(f"{what} cannot be read: {type(exc).__name__}: {first_line}") from exc
