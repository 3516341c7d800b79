"""Errors raised by the stores."""

from __future__ import annotations

from deskwork.exceptions import DeskworkError

__all__ = ["StoreError"]


class StoreError(DeskworkError):
    """A store cannot be used: its database is damaged, unreadable, or from a newer deskwork.

    The message names the database and says what to do. Stores never overwrite, truncate
    or drop a damaged database file.
    """

    def __init__(self, message: str, *, location: str | None = None) -> None:
        super().__init__(message)
        self.location = location
        """The database file or (password-free) URL the error is about."""
