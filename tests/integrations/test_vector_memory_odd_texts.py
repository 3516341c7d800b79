"""VectorMemoryStore keeps a NUL or a lone surrogate (``"\\ud800"``) in a value and refuses one
in a key or a scope with the 'refused a value' StoreError, as the other memory stores do
(tests/store/test_memory_store_unstorable_texts.py); a read by such a key is unknown. A text
value with a lone surrogate (a model's reply cut inside an emoji, say) raised a raw
``UnicodeEncodeError`` on both backends, which failed the run of a desk whose memory store it
was after the model had answered."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the vector extra (numpy) is not installed")

from deskwork import Desk, Worker
from deskwork.memory import VectorMemoryStore
from deskwork.memory.vector import VectorBackend
from deskwork.store import InMemoryRunStore, StoreError
from deskwork.testing import ScriptedAdapter, reply

HAS_CHROMA = importlib.util.find_spec("chromadb") is not None
BACKENDS = [
    "numpy",
    pytest.param("chroma", marks=pytest.mark.skipif(not HAS_CHROMA, reason="no chroma extra")),
]
ODD = pytest.mark.parametrize("odd", ["\x00", "\ud800"], ids=["nul", "surrogate"])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> VectorMemoryStore:
    backend: VectorBackend = request.param
    return VectorMemoryStore(tmp_path / "vectors", backend=backend)


@ODD
def test_a_value_holding_it_reads_back_equal_and_is_found(
    store: VectorMemoryStore, odd: str
) -> None:
    text = f"the cat sat {odd} on the mat"
    value = {"text": f"café {odd} done", "items": [odd, "é"]}
    store.write("text", text, "s")
    store.write("json", value, "s")
    assert store.read("text", "s") == text
    assert store.read("json", "s") == value
    assert store.search(f"cat {odd} mat", "s", top_k=1) == [("text", text)]


@ODD
def test_a_key_or_scope_holding_it_is_refused_and_unknown(
    store: VectorMemoryStore, odd: str
) -> None:
    with pytest.raises(StoreError, match="refused a value"):
        store.write(f"k{odd}", "v", "s")
    with pytest.raises(StoreError, match="refused a value"):
        store.write("k", "v", f"s{odd}")
    assert store.read(f"k{odd}", "s") is None
    assert store.read("k", f"s{odd}") is None
    assert store.search("k", f"s{odd}") == []
    store.reset(f"s{odd}")  # nothing to forget
    store.write("k", "v", "s")  # the store goes on
    assert store.read("k", "s") == "v"


def test_a_reply_with_a_lone_surrogate_completes_the_run_and_is_remembered(
    store: VectorMemoryStore,
) -> None:
    answer = "half an emoji: \ud83d"
    desk = Desk(
        model="scripted/m",
        adapter=ScriptedAdapter([reply(answer)]),
        run_store=InMemoryRunStore(),
        memory_store=store,
    )
    report = desk.run(Worker(name="W"), "hi")
    assert report.status == "completed", report.errors
    assert report.content == answer
    assert store.read("last_output", "worker:W") == answer
