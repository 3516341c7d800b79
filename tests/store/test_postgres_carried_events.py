"""PostgreSQL run store inside ``carried`` (a durable run whose DBOS checkpoints go to the
store's database): the run's events wait for its next checkpoint and are committed in its
round trip (``commit_with``), or by the writer thread after ``CARRY_SECONDS``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import psycopg
import pytest
from storekit import numbered_event, stored_event_ids

from deskwork.store.postgres import CARRY_SECONDS, PostgresRunStore, carrier


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresRunStore]:
    store = PostgresRunStore(postgres_url)
    store.create_run("r", None)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS checkpoints (n INTEGER PRIMARY KEY)")
    yield store
    store.close()


def test_a_checkpoint_commits_the_pending_events_in_its_round_trip(
    store: PostgresRunStore, postgres_url: str
) -> None:
    async def step() -> tuple[list[str], list[tuple[int]], list[str]]:
        with store.carried(lambda: True):
            assert carrier() is store
            store.add_event(numbered_event("r", 0))
            store.add_event(numbered_event("r", 1))
            store.flush()  # in the workflow's code: left to the next checkpoint
            before = stored_event_ids(postgres_url, "r")
            rows = store.commit_with(
                "INSERT INTO checkpoints (n) VALUES (%(n)s) RETURNING n", {"n": 7}
            )
            return before, rows, stored_event_ids(postgres_url, "r")

    before, rows, after = asyncio.run(step())
    assert before == []
    assert rows == [(7,)]
    assert after == ["0", "1"]
    assert carrier() is None


def test_a_failed_checkpoint_keeps_the_events_pending_and_commits_nothing(
    store: PostgresRunStore, postgres_url: str
) -> None:
    async def step() -> None:
        with store.carried(lambda: True):
            store.add_event(numbered_event("r", 0))
            store.commit_with("INSERT INTO checkpoints (n) VALUES (%(n)s)", {"n": 1})
            store.add_event(numbered_event("r", 1))
            with pytest.raises(psycopg.errors.UniqueViolation):
                store.commit_with("INSERT INTO checkpoints (n) VALUES (%(n)s)", {"n": 1})

    asyncio.run(step())
    # the refused checkpoint's own events were committed one by one (the store's salvage)
    assert [e.event_id for e in store.get_events("r")] == ["0", "1"]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (1,)


def test_events_no_checkpoint_carries_are_committed_after_carry_seconds(
    store: PostgresRunStore, postgres_url: str
) -> None:
    async def step() -> tuple[list[str], float]:
        with store.carried(lambda: True):
            store.add_event(numbered_event("r", 0))
            started = time.monotonic()
            early = stored_event_ids(postgres_url, "r")
            while not stored_event_ids(postgres_url, "r"):
                await asyncio.sleep(0.01)
                assert time.monotonic() - started < 5, "never committed"
            return early, time.monotonic() - started

    early, waited = asyncio.run(step())
    assert early == []
    assert waited >= CARRY_SECONDS * 0.5


def test_outside_the_workflows_own_code_flush_commits(
    store: PostgresRunStore, postgres_url: str
) -> None:
    async def step() -> list[str]:
        with store.carried(lambda: False):  # a step's body, say (a child run's tool call)
            store.add_event(numbered_event("r", 0))
            store.flush()
            return stored_event_ids(postgres_url, "r")

    assert asyncio.run(step()) == ["0"]


def test_a_write_that_may_not_wait_takes_the_carried_events_with_it(
    store: PostgresRunStore, postgres_url: str
) -> None:
    """A run outside ``carried`` (another run of the desk) does not wait for the carried
    run's checkpoint: its event is committed at once, with the waiting ones."""

    async def step() -> float:
        with store.carried(lambda: True):
            store.add_event(numbered_event("r", 0))
        started = time.monotonic()
        store.add_event(numbered_event("r", 1))
        while len(stored_event_ids(postgres_url, "r")) < 2:
            await asyncio.sleep(0.005)
        return time.monotonic() - started

    assert asyncio.run(step()) < CARRY_SECONDS
