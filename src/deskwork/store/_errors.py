"""Errors raised by the stores (defined in :mod:`deskwork.exceptions`, the one exception tree)."""

from __future__ import annotations

from deskwork.exceptions import StoreError

__all__ = [
    "StoreError",
    "check_event_keys",
    "check_keys",
    "closed_store",
    "refused_value",
    "unstorable_text",
]


def closed_store(location: str | None) -> StoreError:
    """The error of every call to a store after its ``close()``, the same on every store
    (``location``: its file or password-free URL; ``None`` for one in memory): one clear
    answer instead of the driver's own (``sqlite3.ProgrammingError``, or a closed pool taken
    for an unreachable server)."""
    where = f"the store at {location}" if location else "the in-memory store"
    return StoreError(f"{where} is closed: it takes no more calls", location=location)


def refused_value(location: str | None, reason: str) -> StoreError:
    """The error of a write whose value a store refuses for good (retrying cannot help)."""
    where = f"the database at {location}" if location else "the in-memory store"
    return StoreError(f"{where} refused a value: {reason}", location=location)


def unstorable_text(text: str) -> bool:
    """Whether ``text`` holds a character a database text column cannot hold as it is: a NUL
    (PostgreSQL refuses it) or a lone surrogate (``"\\ud800"``: Python allows it, UTF-8
    cannot encode it, so neither SQLite nor PostgreSQL can be sent it). No store keeps one
    in a key (:func:`check_keys`). A non-ASCII text is encoded to tell (``isascii`` is a
    flag of the string, read without a walk over it)."""
    if "\x00" in text:
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_keys(location: str | None, *texts: str | None) -> None:
    """Refuse a NUL character or a lone surrogate (:func:`unstorable_text`) in an id or a name a
    store keeps as a key (a run or session id, a runner or worker name, an event's fields, a
    checkpoint's thread id and keys), the same on every store; a read by such a key is
    unknown everywhere (no stored key has one)."""
    for text in texts:
        if text is not None and unstorable_text(text):
            what = "a NUL character" if "\x00" in text else "a lone surrogate"
            raise refused_value(location, f"{what} in the id or name {text!r}")


def check_event_keys(location: str | None, *texts: str) -> None:
    """:func:`check_keys` for an event's own texts (its id, type, run id, source): one test
    of them joined passes the common case (ASCII without a NUL), and only otherwise is each
    looked at."""
    joined = "".join(texts)
    if "\x00" in joined or not joined.isascii():
        check_keys(location, *texts)
