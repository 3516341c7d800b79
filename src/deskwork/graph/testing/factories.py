"""Ready-made graph states for tests."""

from __future__ import annotations

from typing import Any

from deskwork.graph.core.state import OrchestratorState, create_initial_state

__all__ = ["make_test_state"]


def make_test_state(
    user_input: str = "Hello",
    *,
    session_id: str = "test-session",
    user_id: str = "test-user",
    current_agent: str = "supervisor",
    request_id: str | None = None,
    context_slots: dict[str, Any] | None = None,
    knowledge_context: dict[str, Any] | None = None,
) -> OrchestratorState:
    """:func:`create_initial_state` with test identities and, optionally, pre-filled slots."""
    state = create_initial_state(
        user_input,
        current_agent=current_agent,
        session_id=session_id,
        user_id=user_id,
        request_id=request_id,
    )
    state["context_slots"] = dict(context_slots or {})
    state["knowledge_context"] = dict(knowledge_context or {})
    return state
