"""VectorMemoryStore's chunk sizes and search limit: the default chunk size follows the
embedding function's ``chunk_chars`` (a model that reads only the start of a text needs chunks
it reads whole); sizes, and a search's ``top_k``, that are no integers are refused with a
ConfigurationError (a float or a text raised a raw TypeError, in the constructor or at the
first write; a ``top_k`` of 1.5 returned the whole scope)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")

from deskwork import ConfigurationError
from deskwork.memory import HashingEmbedding, VectorMemoryStore
from deskwork.memory.vector import DEFAULT_CHUNK_SIZE


class ShortSighted(HashingEmbedding):
    """An embedding of a model that reads only the first 40 characters of a text."""

    chunk_chars = 40

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def __call__(self, input: Any) -> list[list[float]]:
        self.texts += input
        return super().__call__([text[: self.chunk_chars] for text in input])


def test_the_default_chunk_size_is_what_the_embedding_reads_whole(tmp_path: Path) -> None:
    embedding = ShortSighted()
    store = VectorMemoryStore(tmp_path / "v", embedding_function=embedding)
    assert (store.chunk_size, store.chunk_overlap) == (40, 10)
    store.write("long", "alpha bravo charlie delta " * 4 + "zebra crossing", "s")
    store.write("other", "nothing of the kind", "s")
    assert max(len(text) for text in embedding.texts) <= 40
    assert store.search("zebra crossing", "s", top_k=1)[0][0] == "long"


def test_an_embedding_that_reads_whole_texts_keeps_the_long_chunks(tmp_path: Path) -> None:
    store = VectorMemoryStore(tmp_path / "v")
    assert (store.chunk_size, store.chunk_overlap) == (DEFAULT_CHUNK_SIZE, 200)
    given = VectorMemoryStore(tmp_path / "w", chunk_size=100, embedding_function=ShortSighted())
    assert (given.chunk_size, given.chunk_overlap) == (100, 25)


@pytest.mark.parametrize(
    ("size", "overlap"), [(10.5, 0), ("100", 10), (True, 0), (100, 2.5), (100, "10"), (0, None)]
)
def test_chunk_sizes_that_are_no_integers_are_refused(
    tmp_path: Path, size: Any, overlap: Any
) -> None:
    with pytest.raises(ConfigurationError, match="needs integers chunk_size > 0"):
        VectorMemoryStore(tmp_path / "v", chunk_size=size, chunk_overlap=overlap)


@pytest.mark.parametrize("top_k", [1.5, "3", None, True])
def test_a_top_k_that_is_no_integer_is_refused(tmp_path: Path, top_k: Any) -> None:
    """1.5 never equals a count of keys, so the whole scope came back."""
    store = VectorMemoryStore(tmp_path / "v")
    for key in "abc":
        store.write(key, f"text {key}", "s")
    with pytest.raises(ConfigurationError, match="top_k must be an integer"):
        store.search("text", "s", top_k=top_k)
