"""A negative limit of a listing is a caller's mistake, answered the same by every store:
SQLite read it as no limit (every run), PostgreSQL raised its driver's error, the in-memory
store listed none. A limit of 0 lists none everywhere."""

from __future__ import annotations

import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.store import RunStore


def test_a_negative_limit_raises_configuration_error(run_store: RunStore) -> None:
    for run_id in ("a", "b"):
        run_store.create_run(run_id, None)
    run_store.put_checkpoint_items("t", [("k1", b"1"), ("k2", b"2")])
    with pytest.raises(ConfigurationError, match="limit must be 0 or more"):
        run_store.list_runs(-1)
    with pytest.raises(ConfigurationError, match="limit must be 0 or more"):
        run_store.get_checkpoint_items("t", limit=-1)
    assert run_store.list_runs(0) == []
    assert run_store.get_checkpoint_items("t", limit=0) == []
    assert {r.run_id for r in run_store.list_runs(5)} == {"a", "b"}
    assert run_store.get_checkpoint_items("t", limit=1) == [("k1", b"1")]
