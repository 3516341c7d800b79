"""Memory stores and local embedding functions.

``VectorMemoryStore`` needs the ``vector`` extra, ``LocalSemanticEmbedding`` the
``embeddings`` extra and ``PostgresMemoryStore`` the ``postgres`` extra; all are imported
lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.memory._embeddings import HashingEmbedding, LocalSemanticEmbedding
    from deskwork.memory.base import ExternalMemoryStore, MemoryStore
    from deskwork.memory.postgres import PostgresMemoryStore
    from deskwork.memory.simple import InMemoryMemoryStore, SQLiteMemoryStore
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
    "ExternalMemoryStore": "deskwork.memory.base",
    "HashingEmbedding": "deskwork.memory._embeddings",
    "InMemoryMemoryStore": "deskwork.memory.simple",
    "LocalSemanticEmbedding": "deskwork.memory._embeddings",
    "MemoryStore": "deskwork.memory.base",
    "PostgresMemoryStore": "deskwork.memory.postgres",
    "SQLiteMemoryStore": "deskwork.memory.simple",
    "VectorMemoryStore": "deskwork.memory.vector",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
