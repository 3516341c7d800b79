"""``deskwork worker`` hands the runs of dead workers back to DBOS's recovery queue, whose
poller backs off while idle in a worker: a hand-back wakes this worker's poller of it."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from deskwork.cli import worker
from deskwork.runtime import _dbos_queue, _durable


@pytest.mark.parametrize("taken", [["run-1", "run-2"], []])
def test_a_hand_back_wakes_the_recovery_queue_poller_only_when_it_took_runs(
    monkeypatch: pytest.MonkeyPatch, taken: list[str]
) -> None:
    woken: list[str] = []
    monkeypatch.setattr(_durable, "hand_back", lambda desk: list(taken))
    monkeypatch.setattr(_dbos_queue, "wake", woken.append)
    desk: Any = object()
    assert worker._hand_back(desk) == taken
    assert woken == ([_dbos_queue.RECOVERY_QUEUE] if taken else [])
