"""Memory stores and local embedding functions.

``VectorMemoryStore`` needs the ``vector`` extra, ``LocalSemanticEmbedding`` the
``embeddings`` extra and ``PostgresMemoryStore`` the ``postgres`` extra; all are imported
lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.memory.base import ExternalMemoryStore, MemoryStore
from deskwork.memory.simple import InMemoryMemoryStore, SQLiteMemoryStore

if TYPE_CHECKING:
    from deskwork.memory._embeddings import HashingEmbedding, LocalSemanticEmbedding
    from deskwork.memory.postgres import PostgresMemoryStore
    from deskwork.memory.vector import VectorMemoryStore

__all__ = [
    "ExternalMemoryStore",
    "HashingEmbedding",
    "InMemoryMemoryStore",
    "LocalSemanticEmbedding",
    "MemoryStore",
    "PostgresMemoryStore",
    "SQLiteMemoryStore",
    "VectorMemoryStore",
]

_LAZY = {
    "HashingEmbedding": "deskwork.memory._embeddings",
    "LocalSemanticEmbedding": "deskwork.memory._embeddings",
    "PostgresMemoryStore": "deskwork.memory.postgres",
    "VectorMemoryStore": "deskwork.memory.vector",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deskwork.memory' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
