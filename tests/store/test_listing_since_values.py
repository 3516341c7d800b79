"""A listing's ``since`` means the same time on every store: a naive ``datetime`` is local
time (as ``datetime.astimezone`` reads it). Before, the in-memory store raised ``TypeError``
for one and PostgreSQL read it in the server's time zone, hours away from the caller's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.store import RunStore


@pytest.fixture
def tokyo_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 9 hours ahead of UTC, as on a laptop in Tokyo."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("tokyo_time")
def test_a_naive_since_is_local_time_on_every_store(run_store: RunStore) -> None:
    run_store.create_run("a", None)
    half_an_hour = timedelta(minutes=30)

    assert [r.run_id for r in run_store.list_runs(since=datetime.now() - half_an_hour)] == ["a"]
    assert run_store.list_runs(since=datetime.now() + half_an_hour) == []


@pytest.mark.parametrize("since", ["yesterday", 1700000000, datetime.now().date()])
def test_a_since_that_is_no_datetime_raises_configuration_error(
    run_store: RunStore, since: Any
) -> None:
    with pytest.raises(ConfigurationError, match="since must be a datetime"):
        run_store.list_runs(since=since)
