"""Recall relevant memories before an agent runs: :class:`MemoryInjectionMiddleware`.

Before each invocation the middleware searches the session's memories (and, for a known user, the
user's memories across sessions) with the last message as the query, keeps one memory per key (the
more important one), sorts by importance and puts at most ``limit`` of them, as JSON-able dicts,
into ``state["knowledge_context"]["_injected_memories"]``.

It never blocks the agent: a backend without search (``NotImplementedError``) is skipped silently,
any other failure is logged as a warning and the agent runs without injected memories.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.core.logging_context import get_graph_logger

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.session.interface import SessionManager
    from deskwork.graph.session.models import Memory

__all__ = ["INJECTED_MEMORIES_KEY", "MemoryInjectionMiddleware"]

INJECTED_MEMORIES_KEY = "_injected_memories"
"""The ``knowledge_context`` key that receives the memories."""

_ANONYMOUS = "anonymous"

logger = get_graph_logger("deskwork.graph.agents")


class MemoryInjectionMiddleware(AgentMiddleware):
    """Injects relevant memories into ``state["knowledge_context"]["_injected_memories"]``.

    Args:
        session_manager: Where memories are searched.
        limit: The most memories injected (>= 1).
    """

    def __init__(self, session_manager: SessionManager, *, limit: int = 5) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.session_manager = session_manager
        self.limit = limit

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        query = _last_message_text(state)
        if not query:
            return state
        try:
            found = await self._search(state, query)
        except Exception as exc:  # memory lookup never blocks the agent
            logger.warning(
                "memory_injection_failed",
                agent_name=agent_name,
                exc_type=type(exc).__name__,
                exc_msg=str(exc),
            )
            return state
        if not found:
            return state
        memories = _dedupe_by_key(found)[: self.limit]
        knowledge = dict(state.get("knowledge_context") or {})
        knowledge[INJECTED_MEMORIES_KEY] = [m.model_dump(mode="json") for m in memories]
        new_state = state.copy()  # the caller's state is left untouched
        new_state["knowledge_context"] = knowledge
        return new_state

    async def _search(self, state: OrchestratorState, query: str) -> list[Memory]:
        found: list[Memory] = []
        session_id = state.get("session_id")
        if session_id:
            with contextlib.suppress(NotImplementedError):  # backend without search
                found += await self.session_manager.search_memories(
                    session_id, query, limit=self.limit
                )
        user_id = state.get("user_id")
        if user_id and user_id != _ANONYMOUS:
            with contextlib.suppress(NotImplementedError):
                found += await self.session_manager.search_memories_by_user(
                    user_id, query, limit=self.limit
                )
        return found

    def __repr__(self) -> str:
        return f"MemoryInjectionMiddleware(limit={self.limit})"


def _dedupe_by_key(memories: list[Memory]) -> list[Memory]:
    best: dict[str, Memory] = {}
    for memory in memories:
        kept = best.get(memory.key)
        if kept is None or memory.importance > kept.importance:
            best[memory.key] = memory
    return sorted(best.values(), key=lambda m: m.importance, reverse=True)


def _last_message_text(state: OrchestratorState) -> str:
    messages = state.get("messages") or []
    if not messages:
        return ""
    content = messages[-1].content
    if isinstance(content, str):
        return content.strip()
    parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
    return " ".join(parts).strip()
