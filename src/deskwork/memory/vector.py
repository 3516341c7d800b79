"""VectorMemoryStore: semantic memory on local disk, searched by cosine similarity.

Two backends keep the same records and answer the same way:

- ``"numpy"`` (default, extra ``vector``): one SQLite file, ``vectors.sqlite3`` under
  ``path``, and a brute-force cosine search in NumPy over the chunks of one scope. No server,
  no index to build; fast enough for the thousands of chunks a worker's memory holds. Several
  processes may share the file (WAL): each sees the others' writes.
- ``"chroma"`` (extra ``chroma``): one ChromaDB collection (cosine space) under ``path``, with
  Chroma's anonymized telemetry turned off. A live Chroma client does not see writes made by
  another process.

Layout: one collection (``collection_name``) holds every scope. A value is stored as JSON;
the text that is embedded is the value itself when it is a string (a lone surrogate, which no
database takes, as its escape ``\\ud800``), its JSON otherwise, cut into chunks of
``chunk_size`` characters that overlap by ``chunk_overlap``. Each chunk is one record with
``scope``, ``key`` and ``chunk`` (its index); chunk 0 also carries the JSON value, so
:meth:`~VectorMemoryStore.read` is one lookup. :meth:`~VectorMemoryStore.search` ranks chunks
by cosine similarity inside one scope and returns each key once, at the rank of its best
chunk.

Embeddings are computed by deskwork, not by the backend: the default is the deterministic
:class:`~deskwork.memory.HashingEmbedding`; pass any Chroma embedding function (or any
callable ``list[str] -> list[vector]``) for provider-quality or local semantic vectors, e.g.
:class:`~deskwork.memory.LocalSemanticEmbedding`. The collection remembers the embedding
function's name, and reopening it with another one is refused (the vectors would not
compare).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from deskwork._extras import require
from deskwork.exceptions import ConfigurationError
from deskwork.memory._embeddings import HashingEmbedding
from deskwork.memory.base import MemoryStore
from deskwork.store._errors import check_keys, closed_store, unstorable_text
from deskwork.utils import escape_surrogates, is_integer, to_jsonable

__all__ = ["EmbeddingFunction", "VectorBackend", "VectorMemoryStore", "chunk_text"]

EmbeddingFunction = Callable[[list[str]], Any]
"""What ``embedding_function`` may be: texts in, one vector (a sequence of floats) per text."""
VectorBackend = Literal["numpy", "chroma"]
"""Where vectors live: ``"numpy"`` (SQLite + NumPy, extra ``vector``) or ``"chroma"``."""
DEFAULT_CHUNK_SIZE = 8000
"""Characters per chunk for an embedding function that reads a whole text (no ``chunk_chars``)."""
_EMBEDDING_KEY = "deskwork_embedding"
_SEARCH_WIDENING = 4
_SQLITE_FILE = "vectors.sqlite3"
# Chroma's rule, applied by both backends so a name works with either
_COLLECTION_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]")


class _Backend(Protocol):
    """Where one collection's chunks live; the store does the chunking and embedding."""

    def replace(
        self, scope: str, key: str, chunks: list[str], vectors: list[list[float]], value: str
    ) -> None:
        """Store ``key``'s chunks (``value``, its JSON, on chunk 0), dropping older ones."""

    def values(self, scope: str, keys: list[str]) -> dict[str, str]:
        """The JSON values of those of ``keys`` that ``scope`` holds."""

    def nearest(self, scope: str, vector: list[float], top_k: int) -> list[str]:
        """Up to ``top_k`` keys of ``scope``, by the cosine similarity of their best chunk."""

    def keys(self, scope: str) -> list[str]:
        """Every key of ``scope``, in order."""

    def reset(self, scope: str) -> None:
        """Drop every chunk of ``scope``."""

    def close(self) -> None:
        """Release the database."""


class VectorMemoryStore(MemoryStore):
    """Memory with semantic search, persisted under ``path``.

    Args:
        path: directory of the database (created if missing).
        chunk_size: characters per embedded chunk. Default: the embedding function's
            ``chunk_chars`` when it has one (:class:`~deskwork.memory.LocalSemanticEmbedding`:
            800, as its model reads only the first 256 word pieces of a text), else 8000. With
            a model that reads only the start of a text (most sentence-embedding models), pick
            chunks it reads whole: the rest of a longer chunk does not count in its vector, so
            search cannot find it.
        chunk_overlap: characters shared by neighbouring chunks (``< chunk_size``; default
            200, or a quarter of a smaller ``chunk_size``).
        embedding_function: a Chroma embedding function or any callable mapping a list of
            texts to a list of vectors; default :class:`~deskwork.memory.HashingEmbedding`.
        collection_name: the collection (3-512 characters of ``[a-zA-Z0-9._-]``, starting
            and ending with a letter or digit).
        backend: ``"numpy"`` (SQLite + NumPy, ``pip install 'deskwork[vector]'``) or
            ``"chroma"`` (ChromaDB, ``pip install 'deskwork[chroma]'``). Default: ``"chroma"``
            for a directory that already holds a Chroma database and no NumPy one (a store
            made before the NumPy backend existed keeps its data), else ``"numpy"``.

    Raises:
        MissingExtraError: the backend's package (``numpy`` or ``chromadb``) is not
            installed; the message names the extra.
        ConfigurationError: bad chunk sizes (not integers, or not
            ``0 <= chunk_overlap < chunk_size``), an unknown backend, a path that is not a
            writable directory, a database that cannot be opened, or a collection built
            with another embedding.
    """

    blocking = True  # a write embeds its chunks: seconds for a long text on a CPU

    def __init__(
        self,
        path: str | Path,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        embedding_function: EmbeddingFunction | None = None,
        collection_name: str = "deskwork_memory",
        backend: VectorBackend | None = None,
    ) -> None:
        function = embedding_function or HashingEmbedding()
        chunk_size = _chunk_chars(function) if chunk_size is None else chunk_size
        if chunk_overlap is None and is_integer(chunk_size):
            chunk_overlap = min(200, chunk_size // 4)
        if not (
            is_integer(chunk_size) and is_integer(chunk_overlap) and 0 <= chunk_overlap < chunk_size
        ):
            raise ConfigurationError(
                "VectorMemoryStore needs integers chunk_size > 0 and 0 <= chunk_overlap <"
                f" chunk_size (got chunk_size={chunk_size!r}, chunk_overlap={chunk_overlap!r})"
            )
        backend = backend or _found_backend(Path(path))
        if backend not in get_args(VectorBackend):
            raise ConfigurationError(
                f"VectorMemoryStore: backend must be one of {get_args(VectorBackend)},"
                f" not {backend!r}"
            )
        module = require("numpy", "vector") if backend == "numpy" else require("chromadb", "chroma")
        self.path = Path(path)
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.embedding_function = function
        self.backend = backend
        _check_writable(self.path)
        embedding = _embedding_name(self.embedding_function)
        opener = _NumpyBackend if backend == "numpy" else _ChromaBackend
        self._backend: _Backend = opener(module, self.path, collection_name, embedding)
        self._closed = False

    def __repr__(self) -> str:
        name = _embedding_name(self.embedding_function)
        return (
            f"VectorMemoryStore(path={str(self.path)!r}, embedding={name!r},"
            f" backend={self.backend!r})"
        )

    def write(self, key: str, value: Any, scope: str) -> None:
        """Store ``value`` (JSON-serializable) under ``key``, replacing any earlier value.

        Raises:
            StoreError: ``key`` or ``scope`` holds a NUL or a lone surrogate (as on every
                memory store); such a character in a value is kept.
        """
        self._check_open()
        check_keys(self._location(), key, scope)
        encoded = json.dumps(to_jsonable(value))  # ASCII: a lone surrogate as its escape
        text = escape_surrogates(value) if isinstance(value, str) else encoded
        chunks = chunk_text(text, self.chunk_size, self.chunk_overlap)
        self._backend.replace(scope, key, chunks, self._embed(chunks, query=False), encoded)

    def read(self, key: str, scope: str) -> Any | None:
        """The value stored under ``key`` in ``scope``, or ``None``."""
        self._check_open()
        if unstorable_text(key) or unstorable_text(scope):  # no stored key has one
            return None
        return self._values(scope, [key]).get(key)

    def search(self, query: str, scope: str, top_k: int = 5) -> list[tuple[str, Any]]:
        """The ``top_k`` entries of ``scope`` closest in meaning to ``query``, best first
        (``ConfigurationError`` for a ``top_k`` that is no integer; none for one <= 0).

        A blank query means nothing to rank by: it matches every entry, as on the other
        memory stores (where ``""`` is in every key), so the whole scope comes back in key
        order, whatever ``top_k``; what lists a scope with ``search("", scope)`` (a graph
        session's messages) gets all of it, not five entries of no particular order.
        """
        self._check_open()
        if not is_integer(top_k):  # 1.5 never equals a count of keys: the whole scope came back
            raise ConfigurationError(
                f"VectorMemoryStore.search: top_k must be an integer, not {top_k!r}"
            )
        if unstorable_text(scope):
            return []
        if not query.strip():
            keys = self._backend.keys(scope)
        elif top_k <= 0:
            return []
        else:
            vector = self._embed([escape_surrogates(query)], query=True)[0]
            keys = self._backend.nearest(scope, vector, top_k)
        values = self._values(scope, keys)
        return [(key, values[key]) for key in keys if key in values]

    def reset(self, scope: str) -> None:
        """Forget everything in ``scope`` (other scopes are untouched)."""
        self._check_open()
        if not unstorable_text(scope):  # else nothing to forget
            self._backend.reset(scope)

    def close(self) -> None:
        """Close the database (again: nothing); every later call raises :class:`StoreError`,
        on either backend."""
        if not self._closed:
            self._closed = True
            self._backend.close()

    def _check_open(self) -> None:
        """Raise the closed store's :class:`StoreError` after :meth:`close` (the Chroma
        client itself would go on)."""
        if self._closed:
            raise closed_store(self._location())

    def _location(self) -> str:
        """The database file (NumPy) or directory (Chroma), for store errors."""
        return str(self.path / _SQLITE_FILE if self.backend == "numpy" else self.path)

    def _values(self, scope: str, keys: list[str]) -> dict[str, Any]:
        if not keys:
            return {}
        return {key: json.loads(value) for key, value in self._backend.values(scope, keys).items()}

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        function = self.embedding_function
        embed_query = getattr(function, "embed_query", None)
        vectors = embed_query(texts) if query and callable(embed_query) else function(texts)
        return [[float(x) for x in vector] for vector in vectors]


def _chunk_chars(function: Any) -> int:
    """The characters per chunk ``function`` reads whole: its ``chunk_chars`` when it says (a
    model that reads only the start of a text), else :data:`DEFAULT_CHUNK_SIZE`."""
    size = getattr(function, "chunk_chars", None)
    return size if is_integer(size) and size > 0 else DEFAULT_CHUNK_SIZE


def _found_backend(path: Path) -> VectorBackend:
    """The backend whose database ``path`` already holds: Chroma's only if it alone is there."""
    if (path / "chroma.sqlite3").exists() and not (path / _SQLITE_FILE).exists():
        return "chroma"
    return "numpy"


def chunk_text(text: str, chunk_size: int, chunk_overlap: int) -> list[str]:
    """Cut ``text`` into pieces of ``chunk_size`` characters, neighbours sharing ``chunk_overlap``.

    Always returns at least one chunk (``[""]`` for empty text); the last chunk ends the text.
    """
    step = chunk_size - chunk_overlap
    last_start = max(len(text) - chunk_overlap, 1)
    return [text[start : start + chunk_size] for start in range(0, last_start, step)]


# --------------------------------------------------------------------------- SQLite + NumPy

# Forward migrations: append, never edit a released entry (version n = entry n - 1).
_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS vector_collections (name TEXT PRIMARY KEY,"
        " embedding TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS vector_chunks (collection TEXT NOT NULL,"
        " scope TEXT NOT NULL, key TEXT NOT NULL, chunk INTEGER NOT NULL,"
        " document TEXT NOT NULL, vector BLOB NOT NULL, value TEXT,"
        " PRIMARY KEY (collection, scope, key, chunk))",
    ],
]


class _NumpyBackend:
    """Chunks in SQLite (vectors as unit-length float32 blobs), searched by one matrix product."""

    def __init__(self, numpy: Any, path: Path, name: str, embedding: str) -> None:
        from deskwork.store._sqlite import SQLiteDatabase

        if not _COLLECTION_NAME.fullmatch(name):
            raise ConfigurationError(
                f"VectorMemoryStore: cannot open collection {name!r} in {path}: a name is 3-512"
                " characters of [a-zA-Z0-9._-], starting and ending with a letter or digit"
            )
        self._np = numpy
        self._name = name
        self._db = SQLiteDatabase(path / _SQLITE_FILE)
        try:
            self._db.migrate("vector_memory", _MIGRATIONS)
            with self._db.transaction(immediate=True) as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO vector_collections (name, embedding) VALUES (?, ?)",
                    (name, embedding),
                )
                (stored,) = conn.execute(
                    "SELECT embedding FROM vector_collections WHERE name=?", (name,)
                ).fetchone()
        except BaseException:
            self._db.close()
            raise
        if stored != embedding:
            self._db.close()
            raise _other_embedding(name, path, stored, embedding)

    def replace(
        self, scope: str, key: str, chunks: list[str], vectors: list[list[float]], value: str
    ) -> None:
        np = self._np
        matrix = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms == 0.0, 1.0, norms)
        values = [value] + [None] * (len(chunks) - 1)  # the JSON value rides on chunk 0
        rows = [
            (self._name, scope, key, index, chunks[index], matrix[index].tobytes(), values[index])
            for index in range(len(chunks))
        ]
        with self._db.transaction(immediate=True) as conn:
            stored = conn.execute(
                "SELECT length(vector) FROM vector_chunks WHERE collection=? LIMIT 1",
                (self._name,),
            ).fetchone()
            if stored and stored[0] != matrix.shape[1] * 4:
                raise ConfigurationError(
                    f"VectorMemoryStore: collection {self._name!r} holds vectors of"
                    f" {stored[0] // 4} dimensions, not {matrix.shape[1]}"
                )
            conn.execute(
                "DELETE FROM vector_chunks WHERE collection=? AND scope=? AND key=?",
                (self._name, scope, key),
            )
            conn.executemany("INSERT INTO vector_chunks VALUES (?,?,?,?,?,?,?)", rows)

    def values(self, scope: str, keys: list[str]) -> dict[str, str]:
        marks = ",".join("?" * len(keys))
        with self._db.locked() as conn:
            rows = conn.execute(
                "SELECT key, value FROM vector_chunks WHERE collection=? AND scope=?"
                f" AND chunk=0 AND key IN ({marks})",
                (self._name, scope, *keys),
            ).fetchall()
        return {str(key): str(value) for key, value in rows}

    def nearest(self, scope: str, vector: list[float], top_k: int) -> list[str]:
        np = self._np
        with self._db.locked() as conn:
            rows = conn.execute(
                "SELECT key, vector FROM vector_chunks WHERE collection=? AND scope=?"
                " ORDER BY rowid",
                (self._name, scope),
            ).fetchall()
        if not rows:
            return []
        query = np.asarray(vector, dtype=np.float32)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
        if matrix.size != len(rows) * query.size:
            raise ConfigurationError(
                f"VectorMemoryStore: collection {self._name!r} holds vectors of"
                f" {matrix.size // len(rows)} dimensions, not {query.size}"
            )
        scores = matrix.reshape(len(rows), query.size) @ query  # stored rows are unit length
        keys: dict[str, None] = {}
        for index in np.argsort(-scores, kind="stable"):
            keys.setdefault(str(rows[index][0]))
            if len(keys) == top_k:
                break
        return list(keys)

    def keys(self, scope: str) -> list[str]:
        with self._db.locked() as conn:
            rows = conn.execute(
                "SELECT key FROM vector_chunks WHERE collection=? AND scope=? AND chunk=0"
                " ORDER BY key",
                (self._name, scope),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def reset(self, scope: str) -> None:
        with self._db.locked() as conn:
            conn.execute(
                "DELETE FROM vector_chunks WHERE collection=? AND scope=?", (self._name, scope)
            )

    def close(self) -> None:
        self._db.close()


# --------------------------------------------------------------------------- ChromaDB


class _ChromaBackend:
    """One cosine collection of a persistent Chroma client."""

    def __init__(self, chromadb: Any, path: Path, name: str, embedding: str) -> None:
        settings = require("chromadb.config", "chroma").Settings(anonymized_telemetry=False)
        self._lock = threading.Lock()
        try:
            client = chromadb.PersistentClient(path=str(path), settings=settings)
            self._collection = client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={_EMBEDDING_KEY: embedding},
            )
        except Exception as exc:
            raise ConfigurationError(
                f"VectorMemoryStore: cannot open collection {name!r} in {path}: {exc}"
            ) from exc
        stored = (self._collection.metadata or {}).get(_EMBEDDING_KEY)
        if stored is not None and stored != embedding:
            raise _other_embedding(name, path, stored, embedding)

    def replace(
        self, scope: str, key: str, chunks: list[str], vectors: list[list[float]], value: str
    ) -> None:
        base = _record_id(scope, key)
        metadatas: list[dict[str, Any]] = [
            {"scope": scope, "key": key, "chunk": index} for index in range(len(chunks))
        ]
        metadatas[0]["value"] = value
        with self._lock:
            self._collection.delete(where={"$and": [{"scope": scope}, {"key": key}]})
            self._collection.upsert(
                ids=[f"{base}:{index}" for index in range(len(chunks))],
                documents=chunks,
                embeddings=vectors,
                metadatas=metadatas,
            )

    def values(self, scope: str, keys: list[str]) -> dict[str, str]:
        ids = [f"{_record_id(scope, key)}:0" for key in keys]
        with self._lock:
            got = self._collection.get(ids=ids, include=["metadatas"])
        return {
            str(meta["key"]): str(meta["value"])
            for meta in got["metadatas"] or []
            if meta and meta.get("scope") == scope and "value" in meta
        }

    def nearest(self, scope: str, vector: list[float], top_k: int) -> list[str]:
        with self._lock:
            total = self._collection.count()
        if total == 0:
            return []
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
                return keys[:top_k]
            wanted = min(total, wanted * _SEARCH_WIDENING)

    def keys(self, scope: str) -> list[str]:
        with self._lock:
            got = self._collection.get(
                where={"$and": [{"scope": scope}, {"chunk": 0}]}, include=["metadatas"]
            )
        return sorted(str(meta["key"]) for meta in got["metadatas"] or [] if meta)

    def reset(self, scope: str) -> None:
        with self._lock:
            self._collection.delete(where={"scope": scope})

    def close(self) -> None:
        """Nothing to release: Chroma's client closes with the process."""


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


def _other_embedding(name: str, path: Path, stored: str, embedding: str) -> ConfigurationError:
    return ConfigurationError(
        f"VectorMemoryStore: collection {name!r} in {path} holds vectors of embedding"
        f" {stored!r}, not {embedding!r}; use the same embedding function or another"
        " collection_name"
    )


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
