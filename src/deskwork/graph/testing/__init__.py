"""Test helpers for graph agents: a scripted chat model, ready states, an in-memory session store.

from deskwork.graph.testing import MockLLM, make_test_state, InMemorySessionManager
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.graph.testing.factories import make_test_state
from deskwork.graph.testing.mock_llm import MockLLM

if TYPE_CHECKING:
    from deskwork.graph.session.in_memory import InMemorySessionManager

__all__ = ["InMemorySessionManager", "MockLLM", "make_test_state"]


def __getattr__(name: str) -> Any:
    if name == "InMemorySessionManager":
        from deskwork.graph.session.in_memory import InMemorySessionManager

        return InMemorySessionManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
