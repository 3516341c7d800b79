"""A listing's limit is a whole number 0 .. 2**63 - 1, or ``None`` for no limit, answered the
same by every store. Before, the three answered a float, a bool or a huge number each their
own way: SQLite raised sqlite3's 'datatype mismatch' (for ``None`` too), PostgreSQL listed
1.5 runs as 2 and refused ``True`` with its driver's error, the in-memory store raised
islice's ValueError."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.store import RunStore


@pytest.mark.parametrize("limit", [1.5, True, "3", float("nan"), 2**63])
def test_a_limit_that_is_no_whole_number_raises_configuration_error(
    run_store: RunStore, limit: Any
) -> None:
    run_store.create_run("a", None)
    run_store.put_checkpoint_items("t", [("k1", b"1")])
    with pytest.raises(ConfigurationError, match="limit must be"):
        run_store.list_runs(limit)
    with pytest.raises(ConfigurationError, match="limit must be"):
        run_store.get_checkpoint_items("t", limit=limit)


def test_no_limit_lists_every_run(run_store: RunStore) -> None:
    for run_id in ("a", "b", "c"):
        run_store.create_run(run_id, None)
    assert {r.run_id for r in run_store.list_runs(None)} == {"a", "b", "c"}
    assert len(run_store.list_runs(2**63 - 1)) == 3
