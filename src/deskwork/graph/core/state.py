"""The state every node of a supervised graph reads and updates.

LangGraph merges each node's partial update into the state with the reducer annotated on
the key: ``messages`` appends (deduplicating by message id); ``context_slots`` and
``knowledge_context`` merge dicts so that nodes running in parallel can each add keys.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph.message import add_messages

__all__ = ["OrchestratorState", "create_initial_state"]


def _merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: a new dict with ``left``'s keys overwritten by ``right``'s (inputs untouched)."""
    if not right:
        return dict(left or {})
    if not left:
        return dict(right)
    return {**left, **right}


class OrchestratorState(TypedDict):
    """LangGraph state shared by all agents of a graph."""

    messages: Annotated[list[BaseMessage], add_messages]
    """The conversation; updates are appended (a message with a known id replaces it)."""
    context_slots: Annotated[dict[str, Any], _merge_dicts]
    """Schemaless slots; updates merge key by key."""
    current_agent: str
    """The next agent to run, or the agent that just ran when it ended the turn."""
    knowledge_context: Annotated[dict[str, Any], _merge_dicts]
    """Knowledge loaded for agents; updates merge key by key."""
    session_id: NotRequired[str]
    """Conversation the turn belongs to."""
    user_id: NotRequired[str]
    """User (tenant) the turn belongs to."""
    request_id: NotRequired[str]
    """Correlation id of the request (a UUID4 by default)."""


def create_initial_state(
    user_input: str,
    *,
    current_agent: str = "supervisor",
    session_id: str = "default",
    user_id: str = "anonymous",
    request_id: str | None = None,
) -> OrchestratorState:
    """The state at the start of a turn: one user message and empty slots.

    The ``session_id``/``user_id`` defaults suit single-user development only; production
    code must pass real values. ``request_id`` is a fresh UUID4 unless given.

    Raises:
        TypeError: ``user_input`` is not a str (or a list of message content blocks), or an
            id is not a str.
    """
    if not isinstance(user_input, str | list):
        raise TypeError(
            "user_input must be a str (or a list of message content blocks), not"
            f" {type(user_input).__name__}"
        )
    ids: dict[str, Any] = {"current_agent": current_agent, "session_id": session_id}
    ids.update(user_id=user_id, request_id="" if request_id is None else request_id)
    for name, value in ids.items():
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return OrchestratorState(
        messages=[HumanMessage(content=user_input)],
        context_slots={},
        current_agent=current_agent,
        knowledge_context={},
        session_id=session_id,
        user_id=user_id,
        request_id=request_id or str(uuid.uuid4()),
    )
