"""A blank query to VectorMemoryStore.search matches every entry of the scope, in key order, as
on the other memory stores (``""`` is in every key): it returned the five entries "closest" to
nothing, so a graph session kept on a vector store read back 5 of its 8 messages (missing the
last ones)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")

from deskwork.graph.session import SessionMessage
from deskwork.graph.session.store import StoreSessionManager
from deskwork.memory import VectorMemoryStore
from deskwork.memory.vector import VectorBackend

HAS_CHROMA = importlib.util.find_spec("chromadb") is not None


@pytest.fixture(
    params=[
        "numpy",
        pytest.param("chroma", marks=pytest.mark.skipif(not HAS_CHROMA, reason="no chroma")),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> VectorMemoryStore:
    backend: VectorBackend = request.param
    return VectorMemoryStore(tmp_path / "vectors", backend=backend, chunk_size=20, chunk_overlap=5)


@pytest.mark.parametrize("query", ["", "  "])
def test_a_blank_query_lists_the_whole_scope_in_key_order(
    store: VectorMemoryStore, query: str
) -> None:
    for index in (7, 3, 9, 0, 5, 1, 8, 2):
        store.write(f"k{index}", f"value number {index} " * 3, "s")  # several chunks each
    store.write("other", "elsewhere", "t")
    listed = store.search(query, "s")
    assert [key for key, _ in listed] == [f"k{i}" for i in (0, 1, 2, 3, 5, 7, 8, 9)]
    assert listed[0] == ("k0", "value number 0 " * 3)
    assert store.search(query, "nothing here") == []
    assert len(store.search("value number", "s", top_k=3)) == 3  # a real query still ranks


async def test_a_graph_session_on_a_vector_store_keeps_every_message(
    store: VectorMemoryStore,
) -> None:
    manager = StoreSessionManager(store)
    sent = [SessionMessage(session_id="s1", role="user", content=f"message {i}") for i in range(8)]
    await manager.save_messages("s1", sent)
    assert [m.content for m in await manager.get_messages("s1")] == [m.content for m in sent]
