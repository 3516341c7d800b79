"""Session data: messages, summaries, memories and paginated results (frozen Pydantic models).

Every model rejects unknown fields. Timestamps are timezone-aware UTC; a naive datetime is
taken as UTC.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deskwork.utils import utc_now

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["Memory", "MessageRole", "PaginatedResult", "SessionMessage", "Summary"]

T = TypeVar("T")

MessageRole = Literal["user", "assistant", "ai", "system"]
"""Roles a session message may have (``"assistant"`` and ``"ai"`` mean the same)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _new_id() -> str:
    return str(uuid.uuid4())


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class SessionMessage(BaseModel):
    """One message of a conversation."""

    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """Unique id (a UUID4 unless given)."""
    session_id: str = Field(min_length=1)
    """The conversation it belongs to."""
    role: MessageRole
    """``"user"``, ``"assistant"``/``"ai"`` or ``"system"``."""
    content: str
    """The text."""
    timestamp: datetime = Field(default_factory=utc_now)
    """When it was said (UTC)."""
    user_id: str | None = None
    """The user it belongs to, for ownership checks."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping."""

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _as_utc(value) or value

    def to_langchain(self) -> BaseMessage:
        """The LangChain message: user -> Human, assistant/ai -> AI, system -> System.

        Raises:
            ValueError: the role is none of those (only possible for unvalidated models).
        """
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        kinds: dict[str, type[BaseMessage]] = {
            "user": HumanMessage,
            "assistant": AIMessage,
            "ai": AIMessage,
            "system": SystemMessage,
        }
        kind = kinds.get(self.role)
        if kind is None:
            raise ValueError(f"unknown session message role {self.role!r}")
        return kind(content=self.content, id=self.id)


class Summary(BaseModel):
    """A condensed account of a session so far."""

    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """Unique id."""
    session_id: str = Field(min_length=1)
    """The session summarised."""
    content: str
    """The summary text."""
    user_id: str | None = None
    """The user the session belongs to."""
    created_at: datetime = Field(default_factory=utc_now)
    """When the summary was written (UTC)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping (e.g. how many messages it covers)."""

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _as_utc(value) or value


class Memory(BaseModel):
    """A fact worth remembering, found again by key or by search."""

    model_config = _FROZEN

    id: str = Field(default_factory=_new_id)
    """Unique id."""
    session_id: str = Field(min_length=1)
    """The session it was learned in."""
    key: str = Field(min_length=1)
    """Name to recall it by (unique within a session)."""
    value: str
    """The remembered content."""
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    """0.0 to 1.0; searches list the most important first."""
    user_id: str | None = None
    """The owner; only the owner may update or delete an owned memory."""
    source_agent: str | None = None
    """The agent that stored it."""
    categories: list[str] = Field(default_factory=list)
    """Free-form labels; searches match them too."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping."""
    created_at: datetime = Field(default_factory=utc_now)
    """When it was stored (UTC)."""
    updated_at: datetime | None = None
    """When it was last updated (UTC)."""
    expires_at: datetime | None = None
    """After this moment reads and searches no longer return it."""

    @field_validator("created_at", "updated_at", "expires_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _as_utc(value)

    def is_expired(self, now: datetime | None = None) -> bool:
        """Whether ``expires_at`` has passed (at ``now``, default the current time)."""
        return self.expires_at is not None and self.expires_at <= (now or utc_now())

    def matches(self, query: str) -> bool:
        """Whether a memory search for ``query`` finds this memory (case-insensitive, on key,
        value and categories; ``""`` matches all): the whole query inside one of them, or a
        shared word, stop words ignored. The rule every session manager's search uses."""
        from deskwork.graph.session._rules import memory_matches  # _rules imports this module

        return memory_matches(self, query)


class PaginatedResult(BaseModel, Generic[T]):
    """One page of items; pass ``next_cursor`` back to get the next page."""

    model_config = _FROZEN

    items: list[T]
    """The page."""
    next_cursor: str | None = None
    """Opaque cursor of the next page (``None`` on the last page)."""
    has_more: bool = False
    """Whether another page follows."""
