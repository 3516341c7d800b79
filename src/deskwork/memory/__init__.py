"""Memory stores. ``VectorMemoryStore`` needs the ``vector`` extra and is imported lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.memory.base import ExternalMemoryStore, MemoryStore
from deskwork.memory.simple import InMemoryMemoryStore, SQLiteMemoryStore

if TYPE_CHECKING:
    from deskwork.memory.vector import VectorMemoryStore

__all__ = [
    "ExternalMemoryStore",
    "InMemoryMemoryStore",
    "MemoryStore",
    "SQLiteMemoryStore",
    "VectorMemoryStore",
]


def __getattr__(name: str) -> Any:
    if name == "VectorMemoryStore":
        from deskwork.memory.vector import VectorMemoryStore

        return VectorMemoryStore
    raise AttributeError(f"module 'deskwork.memory' has no attribute {name!r}")
