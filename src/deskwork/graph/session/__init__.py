"""The session layer: conversation history, summaries and memories of graph sessions.

``models`` (``SessionMessage``, ``Summary``, ``Memory``, ``PaginatedResult``), ``interface``
(``SessionManager``), ``in_memory`` (``InMemorySessionManager``), ``store``
(``StoreSessionManager`` over a deskwork memory store) and ``semantic``
(``SemanticSearchMixin``). LangChain loads only when ``SessionMessage.to_langchain`` runs.
"""

from __future__ import annotations

from deskwork.graph.session.in_memory import InMemorySessionManager
from deskwork.graph.session.interface import SessionManager
from deskwork.graph.session.models import Memory, PaginatedResult, SessionMessage, Summary
from deskwork.graph.session.semantic import SemanticSearchMixin
from deskwork.graph.session.store import StoreSessionManager

__all__ = [
    "InMemorySessionManager",
    "Memory",
    "PaginatedResult",
    "SemanticSearchMixin",
    "SessionManager",
    "SessionMessage",
    "StoreSessionManager",
    "Summary",
]
