"""VectorMemoryStore: semantic memory on a local ChromaDB database (extra ``vector``).

Layout: one Chroma collection (``collection_name``, cosine space) holds every scope. A value
is stored as JSON; the text that is embedded is the value itself when it is a string, its JSON
otherwise, cut into chunks of ``chunk_size`` characters that overlap by ``chunk_overlap``.
Each chunk is one record with metadata ``scope``, ``key`` and ``chunk`` (its index); chunk 0
also carries the JSON value, so :meth:`~VectorMemoryStore.read` is one lookup by id.
:meth:`~VectorMemoryStore.search` ranks chunks by cosine distance inside one scope and
returns each key once, at the rank of its best chunk.

Embeddings are computed by deskwork, not by Chroma: the default is the deterministic
:class:`~deskwork.memory.HashingEmbedding`; pass any Chroma embedding function (or any
callable ``list[str] -> list[vector]``) for provider-quality or local semantic vectors, e.g.
:class:`~deskwork.memory.LocalSemanticEmbedding`. The collection remembers the embedding
function's name, and reopening it with another one is refused (the vectors would not
compare). Chroma's anonymized telemetry is turned off.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deskwork._extras import require
from deskwork.exceptions import ConfigurationError
from deskwork.memory._embeddings import HashingEmbedding
from deskwork.memory.base import MemoryStore
from deskwork.utils import to_jsonable

__all__ = ["EmbeddingFunction", "VectorMemoryStore", "chunk_text"]

EmbeddingFunction = Callable[[list[str]], Any]
"""What ``embedding_function`` may be: texts in, one vector (a sequence of floats) per text."""
_EMBEDDING_KEY = "deskwork_embedding"
_SEARCH_WIDENING = 4


class VectorMemoryStore(MemoryStore):
    """Memory with semantic search, persisted by ChromaDB under ``path``.

    Args:
        path: directory of the Chroma database (created if missing).
        chunk_size: characters per embedded chunk.
        chunk_overlap: characters shared by neighbouring chunks (``< chunk_size``).
        embedding_function: a Chroma embedding function or any callable mapping a list of
            texts to a list of vectors; default :class:`~deskwork.memory.HashingEmbedding`.
        collection_name: the Chroma collection (3-512 characters of ``[a-zA-Z0-9._-]``).

    Raises:
        MissingExtraError: ``chromadb`` is not installed (``pip install 'deskwork[vector]'``).
        ConfigurationError: bad chunk sizes, a path that is not a writable directory, a
            database Chroma cannot open, or a collection built with another embedding.
    """

    def __init__(
        self,
        path: str | Path,
        chunk_size: int = 8000,
        chunk_overlap: int = 200,
        embedding_function: EmbeddingFunction | None = None,
        collection_name: str = "deskwork_memory",
    ) -> None:
        if chunk_size <= 0 or not 0 <= chunk_overlap < chunk_size:
            raise ConfigurationError(
                "VectorMemoryStore needs chunk_size > 0 and 0 <= chunk_overlap < chunk_size"
                f" (got chunk_size={chunk_size}, chunk_overlap={chunk_overlap})"
            )
        chromadb = require("chromadb", "vector")
        self.path = Path(path)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.embedding_function = embedding_function or HashingEmbedding()
        self._lock = threading.Lock()
        _check_writable(self.path)
        self._collection = _open_collection(
            chromadb, self.path, collection_name, _embedding_name(self.embedding_function)
        )

    def __repr__(self) -> str:
        name = _embedding_name(self.embedding_function)
        return f"VectorMemoryStore(path={str(self.path)!r}, embedding={name!r})"

    def write(self, key: str, value: Any, scope: str) -> None:
        """Store ``value`` (JSON-serializable) under ``key``, replacing any earlier value."""
        encoded = json.dumps(to_jsonable(value))
        text = value if isinstance(value, str) else encoded
        chunks = chunk_text(text, self.chunk_size, self.chunk_overlap)
        vectors = self._embed(chunks, query=False)
        base = _record_id(scope, key)
        metadatas: list[dict[str, Any]] = [
            {"scope": scope, "key": key, "chunk": index} for index in range(len(chunks))
        ]
        metadatas[0]["value"] = encoded
        with self._lock:
            self._collection.delete(where={"$and": [{"scope": scope}, {"key": key}]})
            self._collection.upsert(
                ids=[f"{base}:{index}" for index in range(len(chunks))],
                documents=chunks,
                embeddings=vectors,
                metadatas=metadatas,
            )

    def read(self, key: str, scope: str) -> Any | None:
        """The value stored under ``key`` in ``scope``, or ``None``."""
        return self._values(scope, [key]).get(key)

    def search(self, query: str, scope: str, top_k: int = 5) -> list[tuple[str, Any]]:
        """The ``top_k`` entries of ``scope`` closest in meaning to ``query``, best first."""
        if top_k <= 0:
            return []
        with self._lock:
            total = self._collection.count()
        if total == 0:
            return []
        vector = self._embed([query], query=True)[0]
        wanted = min(total, top_k * _SEARCH_WIDENING)
        while True:
            with self._lock:
                found = self._collection.query(
                    query_embeddings=[vector],
                    n_results=wanted,
                    where={"scope": scope},
                    include=["metadatas"],
                )
            metadatas = found["metadatas"][0] if found["metadatas"] else []
            keys = list(dict.fromkeys(str(meta["key"]) for meta in metadatas))
            if len(keys) >= top_k or len(metadatas) < wanted or wanted >= total:
                break
            wanted = min(total, wanted * _SEARCH_WIDENING)
        keys = keys[:top_k]
        values = self._values(scope, keys)
        return [(key, values[key]) for key in keys if key in values]

    def reset(self, scope: str) -> None:
        """Forget everything in ``scope`` (other scopes are untouched)."""
        with self._lock:
            self._collection.delete(where={"scope": scope})

    def _values(self, scope: str, keys: list[str]) -> dict[str, Any]:
        if not keys:
            return {}
        ids = [f"{_record_id(scope, key)}:0" for key in keys]
        with self._lock:
            got = self._collection.get(ids=ids, include=["metadatas"])
        values: dict[str, Any] = {}
        for meta in got["metadatas"] or []:
            if meta and meta.get("scope") == scope and "value" in meta:
                values[str(meta["key"])] = json.loads(str(meta["value"]))
        return values

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        function = self.embedding_function
        embed_query = getattr(function, "embed_query", None)
        vectors = embed_query(texts) if query and callable(embed_query) else function(texts)
        return [[float(x) for x in vector] for vector in vectors]


def chunk_text(text: str, chunk_size: int, chunk_overlap: int) -> list[str]:
    """Cut ``text`` into pieces of ``chunk_size`` characters, neighbours sharing ``chunk_overlap``.

    Always returns at least one chunk (``[""]`` for empty text); the last chunk ends the text.
    """
    step = chunk_size - chunk_overlap
    last_start = max(len(text) - chunk_overlap, 1)
    return [text[start : start + chunk_size] for start in range(0, last_start, step)]


def _record_id(scope: str, key: str) -> str:
    return hashlib.sha256(json.dumps([scope, key]).encode()).hexdigest()[:40]


def _embedding_name(function: Any) -> str:
    name = getattr(function, "name", None)
    if callable(name):
        try:
            value = name()
        except Exception:
            value = None
        if isinstance(value, str) and value:
            return value
    return type(function).__qualname__


def _check_writable(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigurationError(
            f"VectorMemoryStore: {path} is not a writable directory ({reason})"
        ) from exc


def _open_collection(chromadb: Any, path: Path, name: str, embedding: str) -> Any:
    """Open (or create) the cosine collection; refuse one built with another embedding."""
    settings = require("chromadb.config", "vector").Settings(anonymized_telemetry=False)
    try:
        client = chromadb.PersistentClient(path=str(path), settings=settings)
        collection = client.get_or_create_collection(
            name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={_EMBEDDING_KEY: embedding},
        )
    except Exception as exc:
        raise ConfigurationError(
            f"VectorMemoryStore: cannot open collection {name!r} in {path}: {exc}"
        ) from exc
    stored = (collection.metadata or {}).get(_EMBEDDING_KEY)
    if stored is not None and stored != embedding:
        raise ConfigurationError(
            f"VectorMemoryStore: collection {name!r} in {path} holds vectors of embedding"
            f" {stored!r}, not {embedding!r}; use the same embedding function or another"
            " collection_name"
        )
    return collection
