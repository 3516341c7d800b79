"""VectorMemoryStore on both backends: SQLite + NumPy (``vector``) and ChromaDB (``chroma``).

Every store test runs on each backend that is installed (Chroma only where ``chromadb`` is).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")

from deskwork import ConfigurationError, Desk, Job, Worker
from deskwork.memory import HashingEmbedding, MemoryStore, VectorMemoryStore
from deskwork.memory.vector import VectorBackend, chunk_text
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply

HAS_CHROMA = importlib.util.find_spec("chromadb") is not None


@pytest.fixture(
    params=[
        "numpy",
        pytest.param(
            "chroma",
            marks=pytest.mark.skipif(not HAS_CHROMA, reason="the chroma extra is not installed"),
        ),
    ]
)
def backend(request: pytest.FixtureRequest) -> VectorBackend:
    """Each backend in turn."""
    value: VectorBackend = request.param
    return value


def _records(path: Path, backend: VectorBackend) -> list[dict[str, Any]]:
    """Every record of the default collection, read with the backend's own client."""
    if backend == "numpy":
        with sqlite3.connect(path / "vectors.sqlite3") as conn:
            rows = conn.execute(
                "SELECT scope, key, chunk, document, value FROM vector_chunks"
                " WHERE collection='deskwork_memory'"
            ).fetchall()
        return [
            {"scope": s, "key": k, "chunk": c, "document": d, **({"value": v} if v else {})}
            for s, k, c, d, v in rows
        ]
    import chromadb

    client = chromadb.PersistentClient(
        path=str(path), settings=chromadb.config.Settings(anonymized_telemetry=False)
    )
    got = client.get_collection("deskwork_memory").get(include=["metadatas", "documents"])
    return [
        {**meta, "document": doc}
        for meta, doc in zip(got["metadatas"] or [], got["documents"] or [], strict=True)
    ]


# --------------------------------------------------------------------------- chunking


@pytest.mark.parametrize(
    ("length", "size", "overlap"), [(0, 10, 2), (5, 10, 2), (10, 10, 2), (23, 10, 3), (100, 7, 0)]
)
def test_chunks_cover_the_text_with_the_requested_overlap(
    length: int, size: int, overlap: int
) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    chunks = chunk_text(text, size, overlap)
    assert chunks and all(len(c) <= size for c in chunks)
    rebuilt = chunks[0] + "".join(c[overlap:] for c in chunks[1:])
    assert rebuilt == text
    for left, right in itertools.pairwise(chunks):
        assert len(left) == size and left[size - overlap :] == right[:overlap]
    assert not any(len(c) <= overlap for c in chunks[1:])  # no chunk made only of overlap


def test_store_writes_one_record_per_chunk(tmp_path: Path, backend: VectorBackend) -> None:
    store = VectorMemoryStore(tmp_path / "db", chunk_size=100, chunk_overlap=20, backend=backend)
    text = "alpha " * 60  # 360 characters -> 5 chunks of <= 100 with 20 overlap
    store.write("long", text, "s")
    store.write("short", "tiny", "s")
    records = _records(tmp_path / "db", backend)
    long_chunks = sorted((r for r in records if r["key"] == "long"), key=lambda r: r["chunk"])
    assert [r["chunk"] for r in long_chunks] == list(range(len(chunk_text(text, 100, 20))))
    assert len(long_chunks) == 5
    assert all(len(r["document"]) <= 100 for r in long_chunks)
    assert "value" in long_chunks[0] and "value" not in long_chunks[1]
    store.write("long", "now short", "s")  # overwriting drops the old chunks
    assert [r["chunk"] for r in _records(tmp_path / "db", backend) if r["key"] == "long"] == [0]


def test_bad_chunk_settings_are_refused(tmp_path: Path, backend: VectorBackend) -> None:
    for size, overlap in [(0, 0), (100, 100), (100, -1)]:
        with pytest.raises(ConfigurationError, match="chunk_overlap < chunk_size"):
            VectorMemoryStore(
                tmp_path / "db", chunk_size=size, chunk_overlap=overlap, backend=backend
            )


# --------------------------------------------------------------------------- store contract


def test_json_values_round_trip_and_persist(tmp_path: Path, backend: VectorBackend) -> None:
    store = VectorMemoryStore(tmp_path / "db", backend=backend)
    assert isinstance(store, MemoryStore)
    values: dict[str, Any] = {
        "text": "plain text",
        "record": {"name": "Ada", "tags": ["math", "engines"], "born": 1815, "ok": True},
        "list": [1, 2.5, None, "x"],
        "number": 42,
    }
    for key, value in values.items():
        store.write(key, value, "global")
    assert {key: store.read(key, "global") for key in values} == values
    assert store.read("missing", "global") is None
    reopened = VectorMemoryStore(tmp_path / "db", backend=backend)
    assert reopened.read("record", "global") == values["record"]
    assert dict(reopened.search("engines math Ada", "global", top_k=1)) == {
        "record": values["record"]
    }


def test_scopes_are_isolated(tmp_path: Path, backend: VectorBackend) -> None:
    store = VectorMemoryStore(tmp_path / "db", backend=backend)
    store.write("note", "the launch is on friday", "worker:a")
    store.write("note", "the budget is approved", "worker:b")
    store.write("other", "friday launch checklist", "worker:b")
    assert store.read("note", "worker:a") == "the launch is on friday"
    assert store.read("note", "worker:b") == "the budget is approved"
    assert store.search("launch friday", "worker:a") == [("note", "the launch is on friday")]
    assert {k for k, _ in store.search("launch friday", "worker:b")} == {"note", "other"}
    store.reset("worker:a")
    assert store.read("note", "worker:a") is None
    assert store.search("launch", "worker:a") == []
    assert store.read("note", "worker:b") == "the budget is approved"
    assert store.search("x", "never-used") == []


def test_search_ranks_by_cosine_and_returns_each_key_once(
    tmp_path: Path, backend: VectorBackend
) -> None:
    store = VectorMemoryStore(tmp_path / "db", chunk_size=60, chunk_overlap=10, backend=backend)
    filler = "quarterly revenue spreadsheet figures " * 8
    store.write("long", filler + "zebra crossing near the school", "s")
    store.write("zoo", "zebras and giraffes at the zoo", "s")
    store.write("cooking", "slow cooked tomato sauce recipe", "s")
    results = store.search("zebra crossing school", "s", top_k=3)
    keys = [key for key, _ in results]
    assert keys[0] == "long"  # found through its last chunk
    assert sorted(keys) == ["cooking", "long", "zoo"]  # every key once, despite many chunks
    assert store.search("zebra", "s", top_k=1)[0][0] in {"long", "zoo"}
    assert store.search("zebra", "s", top_k=0) == []
    if backend == "chroma":
        import chromadb

        client = chromadb.PersistentClient(
            path=str(tmp_path / "db"),
            settings=chromadb.config.Settings(anonymized_telemetry=False),
        )
        assert client.get_collection("deskwork_memory").configuration["hnsw"]["space"] == "cosine"


def test_documented_example(tmp_path: Path, backend: VectorBackend) -> None:
    store = VectorMemoryStore(
        str(tmp_path / "db"), chunk_size=8000, chunk_overlap=200, backend=backend
    )
    store.write("doc1", "AI is transforming healthcare", "global")
    store.write("doc2", "Machine learning predicts outcomes", "global")
    results = store.search("artificial intelligence medicine", "global", top_k=5)
    assert sorted(results) == [
        ("doc1", "AI is transforming healthcare"),
        ("doc2", "Machine learning predicts outcomes"),
    ]
    assert store.read("doc1", "global") == "AI is transforming healthcare"


def test_desk_uses_the_vector_store_for_worker_memory(
    tmp_path: Path, backend: VectorBackend
) -> None:
    store = VectorMemoryStore(tmp_path / "db", backend=backend)
    store.write("context", "The customer is called Ada.", "worker:support")
    adapter = ScriptedAdapter([reply("Hello Ada")])
    desk = Desk(
        model="scripted/model", adapter=adapter, run_store=InMemoryRunStore(), memory_store=store
    )
    report = desk.run(Worker(name="support"), Job(input="greet the customer"))
    assert report.status == "completed"
    sent = str(adapter.calls[0]["messages"])
    assert "The customer is called Ada." in sent
    assert store.read("last_output", "worker:support") == "Hello Ada"


# --------------------------------------------------------------------------- embeddings


def test_hashing_embedding_is_deterministic_and_normalized() -> None:
    first = HashingEmbedding()(["Deterministic vectors, please", ""])
    again = HashingEmbedding()(["Deterministic vectors, please", ""])
    assert first == again
    assert len(first[0]) == 384
    assert math.isclose(math.sqrt(sum(x * x for x in first[0])), 1.0, rel_tol=1e-9)
    assert math.isclose(math.sqrt(sum(x * x for x in first[1])), 1.0)  # empty text too
    small = HashingEmbedding(dimensions=32)(["x"])[0]
    assert len(small) == 32
    # a pinned value: the same on every machine and in every process (BLAKE2b, not hash())
    pinned = HashingEmbedding(dimensions=8)(["deskwork memory"])[0]
    assert [round(x, 4) for x in pinned] == [-0.8944, 0, 0, -0.2236, -0.2236, 0, -0.2236, -0.2236]


class CountingEmbedding:
    """A user-supplied Chroma-style embedding function (2 dimensions: cats, money)."""

    def __init__(self) -> None:
        self.documents = 0
        self.queries = 0

    @staticmethod
    def name() -> str:
        return "counting-test-embedding"

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> CountingEmbedding:
        return CountingEmbedding()

    def __call__(self, input: list[str]) -> Any:
        self.documents += len(input)
        return [self._vector(text) for text in input]

    def embed_query(self, input: list[str]) -> Any:
        self.queries += len(input)
        return [self._vector(text) for text in input]

    @staticmethod
    def _vector(text: str) -> list[float]:
        lowered = text.lower()
        return [0.1 + lowered.count("cat"), 0.1 + lowered.count("money")]


def test_user_supplied_chroma_embedding_function(tmp_path: Path, backend: VectorBackend) -> None:
    embedding = CountingEmbedding()
    store = VectorMemoryStore(tmp_path / "db", embedding_function=embedding, backend=backend)
    store.write("pets", "my cat and the neighbour's cat", "s")
    store.write("bank", "money money money", "s")
    assert store.search("a cat question", "s", top_k=1) == [
        ("pets", "my cat and the neighbour's cat")
    ]
    assert store.search("where is my money", "s", top_k=1)[0][0] == "bank"
    assert (embedding.documents, embedding.queries) == (2, 2)
    with pytest.raises(ConfigurationError, match="counting-test-embedding"):
        # the default embedding would not compare
        VectorMemoryStore(tmp_path / "db", backend=backend)
    plain = VectorMemoryStore(
        tmp_path / "db",
        collection_name="plain_callable",
        backend=backend,
        embedding_function=lambda texts: [[1.0, float(len(t))] for t in texts],
    )
    plain.write("k", "value", "s")
    assert plain.read("k", "s") == "value"


# --------------------------------------------------------------------------- bad paths


def test_path_that_is_not_a_directory_is_a_clear_error(
    tmp_path: Path, backend: VectorBackend
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigurationError, match="is not a writable directory") as info:
        VectorMemoryStore(blocker / "db", backend=backend)
    assert str(blocker / "db") in str(info.value)
    assert "chromadb" not in type(info.value).__module__


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only directories")
def test_read_only_directory_is_a_clear_error(tmp_path: Path, backend: VectorBackend) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ConfigurationError, match="is not a writable directory"):
            VectorMemoryStore(locked, backend=backend)
    finally:
        locked.chmod(0o700)


def test_invalid_collection_name_is_a_clear_error(tmp_path: Path, backend: VectorBackend) -> None:
    with pytest.raises(ConfigurationError, match="cannot open collection 'x'"):
        VectorMemoryStore(tmp_path / "db", collection_name="x", backend=backend)


# --------------------------------------------------------------------------- both backends

_OTHER_PROCESS = """
import json, sys
from deskwork.memory import VectorMemoryStore
store = VectorMemoryStore(sys.argv[1], backend=sys.argv[2], chunk_size=50, chunk_overlap=5)
store.write("written-there", {"city": "Lisbon", "note": "tram 28 to the castle"}, "s")
print(json.dumps([store.read("written-here", "s"), store.search("budget", "s", top_k=1),
                  "chromadb" in sys.modules]))
"""


def test_memory_persists_across_processes(tmp_path: Path, backend: VectorBackend) -> None:
    store = VectorMemoryStore(tmp_path / "db", chunk_size=50, chunk_overlap=5, backend=backend)
    store.write("written-here", "the budget for the trip is 900 euros", "s")
    out = subprocess.run(
        [sys.executable, "-c", _OTHER_PROCESS, str(tmp_path / "db"), backend],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    here, found, loaded_chroma = json.loads(out.stdout.strip().splitlines()[-1])
    assert here == "the budget for the trip is 900 euros"
    assert found == [["written-here", "the budget for the trip is 900 euros"]]
    assert loaded_chroma == (backend == "chroma")  # the default backend never imports Chroma
    if backend == "chroma":
        return  # a live Chroma client does not see another process's writes (Chroma's limit)
    assert store.read("written-there", "s") == {"city": "Lisbon", "note": "tram 28 to the castle"}
    assert store.search("castle tram Lisbon", "s", top_k=1)[0][0] == "written-there"


def test_both_backends_rank_alike(tmp_path: Path) -> None:
    if not HAS_CHROMA:
        pytest.skip("the chroma extra is not installed")
    texts = {
        "zoo": "zebras and giraffes at the zoo",
        "sauce": "slow cooked tomato sauce recipe",
        "rail": "the night train to Vienna leaves at ten",
        "tax": "quarterly tax return for the company",
        "garden": "planting tomatoes and basil in the garden",
    }
    stores = [VectorMemoryStore(tmp_path / b, backend=b) for b in ("numpy", "chroma")]
    for store in stores:
        for key, text in texts.items():
            store.write(key, text, "s")
    for query in ["tomato", "train to Vienna", "giraffe zoo", "company taxes", "basil"]:
        numpy_keys, chroma_keys = ([k for k, _ in s.search(query, "s", top_k=3)] for s in stores)
        assert numpy_keys == chroma_keys, query


# --------------------------------------------------------------------------- NumPy backend


def test_numpy_vectors_and_any_dimension(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")

    def embed(texts: list[str]) -> Any:  # a Chroma-style callable returning a NumPy array
        return numpy.array([[t.count("a") + 0.5, t.count("b") + 0.5, 0.0] for t in texts])

    store = VectorMemoryStore(tmp_path / "db", embedding_function=embed)
    store.write("as", "aaaa", "s")
    store.write("bs", "bbbb", "s")
    assert [k for k, _ in store.search("a", "s", top_k=2)] == ["as", "bs"]
    assert [k for k, _ in store.search("bb", "s", top_k=2)] == ["bs", "as"]
    assert repr(store).endswith("backend='numpy')")
    store.close()


def test_vectors_of_another_dimension_are_refused(tmp_path: Path) -> None:
    store = VectorMemoryStore(tmp_path / "db", embedding_function=HashingEmbedding(dimensions=16))
    store.write("k", "value", "s")
    store.embedding_function = HashingEmbedding(dimensions=32)
    with pytest.raises(ConfigurationError, match="16 dimensions, not 32"):
        store.write("k2", "value", "s")
    with pytest.raises(ConfigurationError, match="16 dimensions, not 32"):
        store.search("value", "s")
    assert store.read("k", "s") == "value"


def test_unknown_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="backend must be one of"):
        VectorMemoryStore(tmp_path / "db", backend="faiss")  # type: ignore[arg-type]
    assert not (tmp_path / "db").exists()


def test_a_chroma_directory_made_before_the_numpy_backend_opens_with_chroma(
    tmp_path: Path,
) -> None:
    if not HAS_CHROMA:
        pytest.skip("the chroma extra is not installed")
    old = VectorMemoryStore(tmp_path / "db", backend="chroma")
    old.write("k", "kept across the upgrade", "s")
    old.close()
    reopened = VectorMemoryStore(tmp_path / "db")  # no backend named: the data decides
    assert reopened.backend == "chroma"
    assert reopened.read("k", "s") == "kept across the upgrade"
    assert not (tmp_path / "db" / "vectors.sqlite3").exists()
    reopened.close()
    assert VectorMemoryStore(tmp_path / "fresh").backend == "numpy"
