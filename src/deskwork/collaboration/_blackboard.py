"""A thread-safe key/value board that workers share.

Every value on the board is JSON: ``write`` and ``update`` convert the value to its JSON form
(Pydantic models are dumped with ``model_dump(mode="json")``, tuples become lists) and store a
private copy, and every read hands out a fresh copy. The board therefore always equals its
serialized form, callers cannot corrupt it by mutating what they passed in or got back, and
``to_state()`` / ``from_state()`` can carry it across a process restart.

Concurrency model::

    caller thread ──► with lock: change state, pick subscribers ──► lock released
                                                                      │
                                  subscriber(key, value, author) ◄────┘  (errors logged)

One ``threading.RLock`` guards the entries and the subscriber lists. Subscribers run after the
lock is released, so a slow or failing subscriber never blocks or breaks a writer. The ``a*``
methods run their sync twin in a worker thread through ``asyncio.to_thread`` so the event loop is
never blocked while waiting for the lock.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, Self

from pydantic import BaseModel, ConfigDict

from deskwork._logs import get_stdlib_logger
from deskwork.core._model import DeskworkModel
from deskwork.utils import escape_surrogates, utc_now

__all__ = [
    "Blackboard",
    "BlackboardCallback",
    "BlackboardEntry",
    "check_name",
    "copy_json",
    "lone_surrogate_key",
    "to_json_value",
]

logger = get_stdlib_logger(__name__)

BlackboardCallback = Callable[[str, Any, str], object]
"""A subscriber: called as ``callback(key, value, author)`` after every write to a key."""

_STATE_VERSION: Final = 1
_LONE_SURROGATE: Final = re.compile(
    r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}"
)
"""A surrogate escape in ``json.dumps`` text (ASCII) that is not half of a pair."""


def _json_default(obj: object) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable")


def to_json_value(value: Any, *, label: str) -> Any:
    """Return a private JSON copy of ``value``.

    Pydantic models (also nested ones) are dumped in JSON mode; tuples become lists and
    non-string dict keys become strings, exactly as after a ``json.dumps``/``json.loads`` trip.
    NaN and infinities are refused: JSON has no such numbers (a saved state would turn them
    into ``null``). So is a dict key holding a lone surrogate (``"\\ud83d"``, half an emoji,
    which a model's JSON can hold): a string value keeps one (saved escaped), but no saved
    state (``to_state()``, a run's stored state, a session store) can write one as a key.

    Args:
        value: The value to convert.
        label: What the value is, used in the error message (for example ``"key 'plan'"``).

    Raises:
        TypeError: ``value`` cannot be represented as JSON, or a key in it holds a lone
            surrogate (the message names the key, escaped).
    """
    try:
        text = json.dumps(value, default=_json_default, allow_nan=False)
        stored = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"value for {label} is not JSON-serializable: {exc}") from exc
    # The JSON text is ASCII: a surrogate shows as an escape, so the common case (none)
    # costs one search of the text, and only a lone one's value is walked for its keys.
    if "\\ud" in text and _LONE_SURROGATE.search(text):
        key = lone_surrogate_key(stored)
        if key is not None:
            raise TypeError(
                f"value for {label}: the key {key!r} holds a lone surrogate, which a saved "
                "state cannot keep as a key"
            )
    return stored


def lone_surrogate_key(value: Any) -> str | None:
    """The first dict key holding a lone surrogate in a JSON value (dicts and lists), if any.

    Only non-ASCII keys are looked at (``isascii`` is a flag of the string, no walk).
    """
    if type(value) is dict:
        mapping: dict[str, Any] = value
        for key, inner in mapping.items():
            if not key.isascii() and escape_surrogates(key) != key:
                return key
            if (found := lone_surrogate_key(inner)) is not None:
                return found
    elif type(value) is list:
        for inner in value:
            if (found := lone_surrogate_key(inner)) is not None:
                return found
    return None


def check_name(label: str, value: Any) -> None:
    """Check that a key or a worker's name is a string.

    Raises:
        TypeError: naming ``label`` and the type given.
    """
    if not isinstance(value, str):
        raise TypeError(f"{label} must be a string, got {type(value).__name__}")


def _check_callback(callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"a subscriber must be callable, got {type(callback).__name__}")


def copy_json(value: Any) -> Any:
    """Return a deep copy of a JSON value (dicts and lists are copied, scalars shared)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


class BlackboardEntry(DeskworkModel):
    """One key on the board, with who wrote it and when.

    Entries handed out by the board are snapshots: they are frozen and their ``value`` is a copy,
    so later writes do not change them and changing them does not change the board.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    value: Any
    """The stored JSON value."""
    author: str
    """Name of the worker that wrote the current value."""
    created_at: datetime
    """When the key was first written (reset if the key is deleted and written again)."""
    updated_at: datetime
    """When the current value was written."""
    version: int = 1
    """1 on the first write, incremented by every later write or update of the key."""

    def _copy(self) -> BlackboardEntry:
        return self.model_copy(update={"value": copy_json(self.value)})


class Blackboard:
    """Shared state for workers: a thread-safe map of keys to JSON values with change callbacks.

    Example:
        ```python
        board = Blackboard()
        board.write("analysis_result", {"score": 95}, author="analyst")
        board.read("analysis_result")  # {"score": 95}
        board.update("hits", lambda n: n + 1, author="counter", default=0)
        ```
    """

    def __init__(self) -> None:
        """Create an empty board."""
        self._lock = threading.RLock()
        self._entries: dict[str, BlackboardEntry] = {}
        self._key_subscribers: dict[str, list[BlackboardCallback]] = {}
        self._all_subscribers: list[BlackboardCallback] = []

    def __len__(self) -> int:
        """Return the number of keys on the board."""
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Return whether ``key`` is on the board."""
        with self._lock:
            return key in self._entries

    def __repr__(self) -> str:
        """Show the keys on the board."""
        return f"Blackboard(keys={self.keys()!r})"

    # ------------------------------------------------------------------ writes

    def write(self, key: str, value: Any, author: str) -> BlackboardEntry:
        """Store ``value`` under ``key`` and notify subscribers.

        Args:
            key: The key to write.
            value: Any JSON-serializable value, or a Pydantic model (stored as its JSON dump).
                The board keeps its own copy; later changes to ``value`` do not affect it.
            author: Name of the worker writing the value.

        Returns:
            A snapshot of the new entry.

        Raises:
            TypeError: ``key`` or ``author`` is not a string, or ``value`` is not
                JSON-serializable or has a dict key holding a lone surrogate (see
                ``to_json_value``; the message names the key).
        """
        check_name("key", key)
        check_name("author", author)
        stored = to_json_value(value, label=f"key {key!r}")
        with self._lock:
            entry = self._store(key, stored, author)
            callbacks = self._subscribers_for(key)
        self._notify(callbacks, key, stored, author)
        return entry._copy()

    def update(
        self, key: str, fn: Callable[[Any], Any], author: str, default: Any = None
    ) -> BlackboardEntry:
        """Atomically replace the value of ``key`` with ``fn(current)``.

        The read, ``fn`` and the write happen under the board's lock, so concurrent updates of
        the same key are never lost (use this to increment counters, append to lists or push to
        queues). ``fn`` receives a private copy of the current value (or of ``default`` when the
        key is missing) and returns the new value; it may mutate and return its argument. If
        ``fn`` raises, the board is unchanged and the error propagates.

        ``fn`` must be quick and must not wait on other threads that use this board. It may
        read the board (the lock is re-entrant), but a write it makes to ``key`` is overwritten.

        Args:
            key: The key to update.
            fn: Computes the new value from the current one.
            author: Name of the worker making the change.
            default: The value ``fn`` receives when ``key`` does not exist.

        Returns:
            A snapshot of the updated entry.

        Raises:
            TypeError: ``key`` or ``author`` is not a string, or the value returned by ``fn``
                is not JSON-serializable or has a dict key holding a lone surrogate.
        """
        return self._update(key, fn, author, default)._copy()

    def _update(
        self, key: str, fn: Callable[[Any], Any], author: str, default: Any
    ) -> BlackboardEntry:
        """``update`` without its snapshot: the board's own entry, for a caller that drops it
        (the snapshot is a deep copy of the whole value). Never hand the result out.
        """
        check_name("key", key)
        check_name("author", author)
        label = f"key {key!r}"
        with self._lock:
            current = self._entries.get(key)
            if current is None:
                base = to_json_value(default, label=label)
            else:
                base = copy_json(current.value)
            stored = to_json_value(fn(base), label=label)
            entry = self._store(key, stored, author)
            callbacks = self._subscribers_for(key)
        self._notify(callbacks, key, stored, author)
        return entry

    def delete(self, key: str) -> bool:
        """Remove ``key``. Subscribers are not called.

        Returns:
            Whether the key existed.
        """
        with self._lock:
            return self._entries.pop(key, None) is not None

    def clear(self) -> None:
        """Remove every entry. Subscriptions are kept; subscribers are not called."""
        with self._lock:
            self._entries.clear()

    # ------------------------------------------------------------------- reads

    def read(self, key: str, default: Any = None) -> Any:
        """Return a copy of the value stored under ``key``, or ``default`` if it is missing."""
        with self._lock:
            entry = self._entries.get(key)
            return default if entry is None else copy_json(entry.value)

    def read_entry(self, key: str) -> BlackboardEntry | None:
        """Return a snapshot of the entry for ``key`` (value, author, timestamps), or ``None``."""
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else entry._copy()

    def exists(self, key: str) -> bool:
        """Return whether ``key`` is on the board."""
        with self._lock:
            return key in self._entries

    def keys(self) -> list[str]:
        """Return the keys in the order they were first written."""
        with self._lock:
            return list(self._entries)

    def all_entries(self) -> dict[str, BlackboardEntry]:
        """Return a snapshot of every entry, keyed by key."""
        with self._lock:
            return {key: entry._copy() for key, entry in self._entries.items()}

    def snapshot(self) -> dict[str, Any]:
        """Return a copy of every value, keyed by key (no metadata)."""
        with self._lock:
            return {key: copy_json(entry.value) for key, entry in self._entries.items()}

    # ----------------------------------------------------------- subscriptions

    def subscribe(self, key: str, callback: BlackboardCallback) -> None:
        """Call ``callback(key, value, author)`` after every write or update of ``key``.

        Subscribing the same callback to the same key twice has no effect. Callbacks run in the
        writing thread after the lock is released; an exception they raise is logged at warning
        level and does not affect the write or other callbacks. Each callback gets its own copy
        of the value.

        Raises:
            TypeError: ``key`` is not a string, or ``callback`` cannot be called (it would fail,
                logged, on every write of the key).
        """
        check_name("key", key)
        _check_callback(callback)
        with self._lock:
            callbacks = self._key_subscribers.setdefault(key, [])
            if callback not in callbacks:
                callbacks.append(callback)

    def subscribe_all(self, callback: BlackboardCallback) -> None:
        """Call ``callback(key, value, author)`` after every write or update of any key.

        Global subscribers run after the subscribers of the written key. See ``subscribe``.
        """
        _check_callback(callback)
        with self._lock:
            if callback not in self._all_subscribers:
                self._all_subscribers.append(callback)

    def unsubscribe(self, key: str, callback: BlackboardCallback) -> bool:
        """Remove a ``subscribe(key, callback)`` subscription.

        Returns:
            Whether the callback was subscribed to ``key``.
        """
        with self._lock:
            callbacks = self._key_subscribers.get(key, [])
            if callback not in callbacks:
                return False
            callbacks.remove(callback)
            if not callbacks:
                del self._key_subscribers[key]
            return True

    def unsubscribe_all(self, callback: BlackboardCallback) -> bool:
        """Remove a ``subscribe_all(callback)`` subscription.

        Returns:
            Whether the callback was subscribed to all keys.
        """
        with self._lock:
            if callback not in self._all_subscribers:
                return False
            self._all_subscribers.remove(callback)
            return True

    # ------------------------------------------------------------- persistence

    def to_state(self) -> dict[str, Any]:
        """Return every entry, with authors, timestamps and versions, as a JSON-compatible dict.

        Subscriptions are not included. Load the result with ``from_state`` or ``restore``.
        """
        with self._lock:
            entries = [entry.model_dump(mode="json") for entry in self._entries.values()]
        return {"version": _STATE_VERSION, "entries": entries}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Self:
        """Build a new board (of this class) from the output of ``to_state``.

        Raises:
            ValueError: ``state`` is not a board state.
        """
        board = cls()
        board.restore(state)
        return board

    def restore(self, state: Mapping[str, Any]) -> None:
        """Replace every entry with those in ``state`` (the output of ``to_state``).

        Subscriptions are kept and subscribers are not called.

        Raises:
            ValueError: ``state`` is not a board state; the board is then unchanged.
        """
        entries = _parse_state(state)
        with self._lock:
            self._entries = entries

    # ------------------------------------------------------------------- async

    async def awrite(self, key: str, value: Any, author: str) -> BlackboardEntry:
        """Async ``write``, run in a worker thread."""
        return await asyncio.to_thread(self.write, key, value, author)

    async def aupdate(
        self, key: str, fn: Callable[[Any], Any], author: str, default: Any = None
    ) -> BlackboardEntry:
        """Async ``update``, run in a worker thread (``fn`` runs there too)."""
        return await asyncio.to_thread(self.update, key, fn, author, default)

    async def aread(self, key: str, default: Any = None) -> Any:
        """Async ``read``, run in a worker thread."""
        return await asyncio.to_thread(self.read, key, default)

    async def aread_entry(self, key: str) -> BlackboardEntry | None:
        """Async ``read_entry``, run in a worker thread."""
        return await asyncio.to_thread(self.read_entry, key)

    async def aexists(self, key: str) -> bool:
        """Async ``exists``, run in a worker thread."""
        return await asyncio.to_thread(self.exists, key)

    async def adelete(self, key: str) -> bool:
        """Async ``delete``, run in a worker thread."""
        return await asyncio.to_thread(self.delete, key)

    async def akeys(self) -> list[str]:
        """Async ``keys``, run in a worker thread."""
        return await asyncio.to_thread(self.keys)

    async def aall_entries(self) -> dict[str, BlackboardEntry]:
        """Async ``all_entries``, run in a worker thread."""
        return await asyncio.to_thread(self.all_entries)

    async def asnapshot(self) -> dict[str, Any]:
        """Async ``snapshot``, run in a worker thread."""
        return await asyncio.to_thread(self.snapshot)

    async def asubscribe(self, key: str, callback: BlackboardCallback) -> None:
        """Async ``subscribe``, run in a worker thread."""
        await asyncio.to_thread(self.subscribe, key, callback)

    async def asubscribe_all(self, callback: BlackboardCallback) -> None:
        """Async ``subscribe_all``, run in a worker thread."""
        await asyncio.to_thread(self.subscribe_all, callback)

    async def aunsubscribe(self, key: str, callback: BlackboardCallback) -> bool:
        """Async ``unsubscribe``, run in a worker thread."""
        return await asyncio.to_thread(self.unsubscribe, key, callback)

    async def aunsubscribe_all(self, callback: BlackboardCallback) -> bool:
        """Async ``unsubscribe_all``, run in a worker thread."""
        return await asyncio.to_thread(self.unsubscribe_all, callback)

    async def aclear(self) -> None:
        """Async ``clear``, run in a worker thread."""
        await asyncio.to_thread(self.clear)

    # ----------------------------------------------------------------- private

    def _store(self, key: str, value: Any, author: str) -> BlackboardEntry:
        """Write an already-converted value. Call with the lock held."""
        now = utc_now()
        previous = self._entries.get(key)
        entry = BlackboardEntry(
            key=key,
            value=value,
            author=author,
            created_at=now if previous is None else previous.created_at,
            updated_at=now,
            version=1 if previous is None else previous.version + 1,
        )
        self._entries[key] = entry
        return entry

    def _subscribers_for(self, key: str) -> list[BlackboardCallback]:
        """Return the callbacks to run for a write of ``key``. Call with the lock held."""
        return [*self._key_subscribers.get(key, ()), *self._all_subscribers]

    @staticmethod
    def _notify(callbacks: list[BlackboardCallback], key: str, value: Any, author: str) -> None:
        """Run subscribers outside the lock, logging (not raising) their errors."""
        for callback in callbacks:
            try:
                callback(key, copy_json(value), author)
            except Exception:
                logger.warning(
                    "Blackboard subscriber %r failed for key %r", callback, key, exc_info=True
                )


def _parse_state(state: Mapping[str, Any]) -> dict[str, BlackboardEntry]:
    """Validate a ``to_state`` dict and return its entries keyed by key."""
    if not isinstance(state, Mapping) or state.get("version") != _STATE_VERSION:
        raise ValueError(f"not a Blackboard state (expected version {_STATE_VERSION})")
    raw_entries = state.get("entries")
    if not isinstance(raw_entries, list):
        raise ValueError("Blackboard state has no 'entries' list")
    entries: dict[str, BlackboardEntry] = {}
    for raw in raw_entries:
        entry = BlackboardEntry.model_validate(raw)
        try:
            value = to_json_value(entry.value, label=f"key {entry.key!r}")
        except TypeError as exc:
            raise ValueError(f"invalid Blackboard state: {exc}") from exc
        entries[entry.key] = entry.model_copy(update={"value": value})
    return entries
