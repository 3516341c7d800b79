"""``SemanticSearchMixin``: vector-similarity memory search on top of a session manager.

Put the mix-in first: ``class MyManager(SemanticSearchMixin, InMemorySessionManager)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskwork.graph.session.models import Memory

__all__ = ["SemanticSearchMixin"]


class SemanticSearchMixin(ABC):
    """Adds ``embed_text`` (abstract) and ``search_memories_semantic`` to a session manager.

    ``search_memories_semantic`` raises ``NotImplementedError`` until overridden; once it is,
    ``get_capabilities()`` lists it.
    """

    @abstractmethod
    async def embed_text(self, text: str) -> list[float]:
        """The embedding vector of ``text``."""

    async def search_memories_semantic(
        self, session_id: str, query: str, limit: int = 5
    ) -> list[Memory]:
        """Memories of the session closest in meaning to ``query``."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement search_memories_semantic()"
        )

    def get_capabilities(self) -> set[str]:
        """The base manager's capabilities, plus ``search_memories_semantic`` if overridden."""
        base: Any = super()
        capabilities: set[str] = (
            set(base.get_capabilities()) if hasattr(base, "get_capabilities") else set()
        )
        own = type(self).search_memories_semantic
        if own is not SemanticSearchMixin.search_memories_semantic:
            capabilities.add("search_memories_semantic")
        return capabilities
