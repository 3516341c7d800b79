"""A memory store keeps a NUL or a lone surrogate (``"\\ud800"``) in a value and gives it
back equal, and refuses one in a key or a scope, the same on every store, with the run
stores' 'refused a value' StoreError; a read by such a key is unknown. SQLite and
PostgreSQL raised sqlite3's and psycopg's raw ``UnicodeEncodeError`` for a lone surrogate
anywhere (a value too: written as it is, "searchable as written"), SQLite and the in-memory
store kept a NUL in a key that PostgreSQL refused."""

from __future__ import annotations

import pytest

from deskwork.memory import MemoryStore
from deskwork.store import StoreError

ODD = pytest.mark.parametrize("odd", ["\x00", "\ud800"], ids=["nul", "surrogate"])


@ODD
def test_a_value_holding_it_reads_back_equal(memory_store: MemoryStore, odd: str) -> None:
    value = {"text": f"café {odd} done", "items": [odd, "é"]}
    memory_store.write("k", value, "s")
    assert memory_store.read("k", "s") == value
    assert memory_store.search("café", "s") == [("k", value)]  # non-ASCII stays searchable


@ODD
def test_a_key_or_scope_holding_it_is_refused_and_unknown(
    memory_store: MemoryStore, odd: str
) -> None:
    with pytest.raises(StoreError, match="refused a value"):
        memory_store.write(f"k{odd}", "v", "s")
    with pytest.raises(StoreError, match="refused a value"):
        memory_store.write("k", "v", f"s{odd}")
    assert memory_store.read(f"k{odd}", "s") is None
    assert memory_store.read("k", f"s{odd}") is None
    assert memory_store.search("k", f"s{odd}") == []
    memory_store.reset(f"s{odd}")  # nothing to forget
    memory_store.write("k", "v", "s")  # the store goes on
    assert memory_store.read("k", "s") == "v"
