"""The session rules both shipped managers follow (validation, ownership, ranking, paging).

Storage differs between :class:`InMemorySessionManager` and :class:`StoreSessionManager`;
what a caller sees must not, so every decision lives here once.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary
from deskwork.utils import is_integer, utc_now

__all__ = [
    "UPDATABLE_MEMORY_FIELDS",
    "apply_memory_update",
    "check_id",
    "check_limit",
    "check_messages",
    "check_summary",
    "may_read_session",
    "may_touch_memory",
    "memory_matches",
    "owned_memory",
    "page",
    "query_terms",
    "rank_memories",
]

T = TypeVar("T")

UPDATABLE_MEMORY_FIELDS = frozenset(
    {"value", "importance", "source_agent", "categories", "metadata", "expires_at"}
)
"""The content fields ``update_memory`` may change; identity fields are fixed."""


def check_id(value: Any, what: str) -> str:
    """``value`` if it is a non-empty string.

    Raises:
        ValueError: otherwise.
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def check_limit(limit: Any) -> int:
    """``limit`` if it is an int >= 1.

    Raises:
        ValueError: otherwise.
    """
    if not is_integer(limit) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")
    return limit


def check_messages(session_id: str, messages: Sequence[SessionMessage]) -> list[SessionMessage]:
    """The messages, each a ``SessionMessage`` of ``session_id``.

    Raises:
        ValueError: a message is of another type or belongs to another session.
    """
    checked = list(messages)
    for message in checked:
        if not isinstance(message, SessionMessage):
            raise ValueError(f"expected SessionMessage, got {type(message).__name__}")
        if message.session_id != session_id:
            raise ValueError(
                f"message {message.id} belongs to session {message.session_id!r},"
                f" not {session_id!r}"
            )
    return checked


def check_summary(session_id: str, summary: Summary) -> Summary:
    """The summary if it is one of ``session_id``.

    Raises:
        ValueError: otherwise.
    """
    if not isinstance(summary, Summary):
        raise ValueError(f"expected Summary, got {type(summary).__name__}")
    if summary.session_id != session_id:
        raise ValueError(f"summary belongs to session {summary.session_id!r}, not {session_id!r}")
    return summary


def may_read_session(messages: Iterable[SessionMessage], user_id: str | None) -> bool:
    """Whether ``user_id`` may read a session with these messages.

    Anyone may when no ``user_id`` is given (a trusted caller) or no message names a user;
    otherwise ``user_id`` must be one of the users named on the session's messages.
    """
    if user_id is None:
        return True
    owners = {m.user_id for m in messages if m.user_id is not None}
    return not owners or user_id in owners


def owned_memory(
    session_id: str, memory: Memory, user_id: str | None, existing: Memory | None
) -> Memory:
    """The memory to store: ``user_id`` filled in, ownership and session checked.

    Raises:
        ValueError: wrong type or session, ``user_id`` contradicts ``memory.user_id``, or the
            key is held by a memory of another user.
    """
    if not isinstance(memory, Memory):
        raise ValueError(f"expected Memory, got {type(memory).__name__}")
    if memory.session_id != session_id:
        raise ValueError(f"memory belongs to session {memory.session_id!r}, not {session_id!r}")
    if user_id is not None:
        if memory.user_id is None:
            memory = memory.model_copy(update={"user_id": user_id})
        elif memory.user_id != user_id:
            raise ValueError(f"memory {memory.key!r} is owned by another user than {user_id!r}")
    if existing is not None and not may_touch_memory(existing, memory.user_id):
        raise ValueError(f"memory key {memory.key!r} is held by another user in this session")
    return memory


def may_touch_memory(memory: Memory, user_id: str | None) -> bool:
    """Whether ``user_id`` may change ``memory`` (no check when ``user_id`` is ``None``)."""
    return user_id is None or memory.user_id is None or memory.user_id == user_id


def apply_memory_update(memory: Memory, updates: Mapping[str, Any]) -> Memory:
    """``memory`` with ``updates`` applied (validated) and ``updated_at`` set.

    Raises:
        ValueError: ``updates`` names a field outside :data:`UPDATABLE_MEMORY_FIELDS`, or a
            new value fails validation (``pydantic.ValidationError`` is a ``ValueError``).
    """
    if not isinstance(updates, Mapping):
        raise ValueError(f"updates must be a mapping, got {type(updates).__name__}")
    illegal = sorted(set(updates) - UPDATABLE_MEMORY_FIELDS)
    if illegal:
        raise ValueError(
            f"update_memory cannot change {illegal}; allowed: {sorted(UPDATABLE_MEMORY_FIELDS)}"
        )
    data = memory.model_dump()
    data.update(updates)
    data["updated_at"] = utc_now()
    return Memory.model_validate(data)


_WORD = re.compile(r"[^\W_]+")  # letters and digits; '_', '-' and punctuation separate words
_STOP_WORDS_TEXT = (
    "a about all am an and any are as at be but by can could did do does for from had has "
    "have he her hers him his how i if in into is it its just me my no not of on or our "
    "please she so than that the their them then there these they this those to too us was we "
    "were what when where which who whom why will with would you your yours "
    "hi hello hey thanks thank ok okay yes yeah also some more much very really "
    "want need like know tell get got "
)
_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def _fold(word: str) -> str:
    # "preferences" and "preference" are one term
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def query_terms(text: str) -> frozenset[str]:
    """The search terms of ``text``: lower-cased words of two or more characters, without
    stop words (``the``, ``my``, ``please``, ``like``, ...), plurals folded."""
    words = _WORD.findall(text.lower())
    return frozenset(_fold(w) for w in words if len(w) > 1 and w not in _STOP_WORDS)


def memory_matches(memory: Memory, query: str) -> bool:
    """Whether ``memory`` matches ``query`` (the one rule every session manager uses).

    Case-insensitive, on the memory's key, value and categories: the empty query matches
    everything; the whole query matching inside one of them (``"pref"`` finds a key
    ``"preference"``) matches; otherwise the memory matches when it shares at least one
    search term (:func:`query_terms`) with the query, so a whole chat message such as
    "Which theme do I prefer, dark or light?" finds a memory whose value is "dark mode".
    """
    needle = query.strip().lower()
    fields = [memory.key, memory.value, *memory.categories]
    if any(needle in field.lower() for field in fields):
        return True
    terms = query_terms(needle)
    return bool(terms) and any(terms & query_terms(field) for field in fields)


def rank_memories(
    memories: Iterable[Memory], query: str, limit: int, now: datetime | None = None
) -> list[Memory]:
    """Unexpired memories matching ``query`` (:func:`memory_matches`): most important first,
    newest first among equals."""
    moment = now or utc_now()
    found = [m for m in memories if not m.is_expired(moment) and memory_matches(m, query)]
    found.sort(key=lambda m: (m.importance, m.created_at), reverse=True)
    return found[: check_limit(limit)]


def page(items: Sequence[tuple[int, T]], cursor: str | None, limit: int) -> PaginatedResult[T]:
    """The page of ``(ordinal, item)`` pairs after ``cursor``, in ordinal order.

    Ordinals increase along ``items``; the cursor is the ordinal of the last item of the
    previous page, so deleting items between two calls neither skips nor repeats any.

    Raises:
        ValueError: ``cursor`` is not one this function wrote, or ``limit`` < 1.
    """
    check_limit(limit)
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit():
            raise ValueError(f"invalid cursor {cursor!r}")
        start = bisect.bisect_right([ordinal for ordinal, _ in items], int(cursor))
    chunk = items[start : start + limit]
    more = start + limit < len(items)
    return PaginatedResult(
        items=[item for _, item in chunk],
        next_cursor=str(chunk[-1][0]) if more else None,
        has_more=more,
    )
