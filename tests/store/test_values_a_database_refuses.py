"""Texts a database column cannot hold as they are, and a write the database refuses.

PostgreSQL's text columns refuse NUL and lone surrogates; large texts used to go to the blob
table raw, so such a text (20 KB pulled out of a binary file) could not be stored. And a
refused write must fail for the run that made it, not block every later write of the store.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path

import pytest

from deskwork import Desk, Event, Job, RunNotRunningError, Worker
from deskwork.store import RunStore, StoreError
from deskwork.store._url import open_run_store
from deskwork.store.postgres import PostgresRunStore
from deskwork.testing import ScriptedAdapter, reply
from deskwork.utils import utc_now

LARGE_WITH_NUL = "\x00" + "x" * 20_000 + "\x00end"
LARGE_WITH_SURROGATE = "y" * 20_000 + "\ud800" + "tail"


def _event(run_id: str, source: str = "test", **payload: object) -> Event:
    return Event(
        event_id=f"{run_id}-{source}",
        type="custom",
        timestamp=utc_now(),
        run_id=run_id,
        source=source,
        payload=dict(payload),
    )


def _round_trip(store: RunStore, text: str) -> None:
    store.create_run("r", {"input": text})
    store.add_event(_event("r", output=text))
    record = store.get_run("r")
    assert record is not None and record.input == {"input": text}
    assert [e.payload["output"] for e in store.get_events("r")] == [text]


def test_a_large_text_with_nul_is_stored_and_read_back(run_store: RunStore) -> None:
    _round_trip(run_store, LARGE_WITH_NUL)


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_a_large_text_with_a_lone_surrogate_is_stored_and_read_back(database_url: str) -> None:
    store = open_run_store(database_url)  # the database stores; the in-memory store keeps JSON
    try:
        _round_trip(store, LARGE_WITH_SURROGATE)
    finally:
        store.close()


def test_a_nul_in_an_event_text_is_refused_when_added(postgres_url: str) -> None:
    """A NUL in an event's source (a text column of its own) is refused by add_event, inside
    an event loop too: it was queued, then dropped (logged) by the writer thread's commit
    after add_event had returned. The other events are stored."""
    store = PostgresRunStore(postgres_url)
    try:
        store.create_run("bad", None)
        store.create_run("good", None)

        async def step() -> None:
            store.add_event(_event("good", n=1))
            with pytest.raises(StoreError, match="refused a value: a NUL character"):
                store.add_event(_event("bad", source="nul\x00in a text column"))
            await asyncio.sleep(0.3)

        asyncio.run(step())
        store.add_event(_event("good", source="later", n=2))
        assert [e.payload["n"] for e in store.get_events("good")] == [1, 2]
        assert store.get_events("bad") == []
    finally:
        store.close()


def test_a_run_id_too_long_to_index_fails_its_write_and_the_store_goes_on(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL indexes a run id up to ~2.7 KB: a longer one is refused for good, as a NUL
    is, not taken for an unreachable server and retried before every later write of every
    run (which all failed then)."""
    long_id = secrets.token_hex(5_000)  # 10,000 characters that do not compress
    store = PostgresRunStore(postgres_url)
    try:
        with pytest.raises(StoreError, match="refused a value"):
            store.create_run(long_id, None)
        store.create_run("good", None)

        async def step() -> None:  # a batch on the writer thread: one good event, one refused
            store.add_event(_event("good", n=1))
            store.add_event(_event(long_id))
            await asyncio.sleep(0.3)

        with caplog.at_level(logging.ERROR, logger="deskwork.store"):
            asyncio.run(step())
            store.flush()
        assert "refused a write; dropped: index row" in caplog.text
        store.add_event(_event("good", source="later", n=2))
        assert [e.payload["n"] for e in store.get_events("good")] == [1, 2]
    finally:
        store.close()


def test_a_refused_write_still_stops_a_run_that_is_not_running(postgres_url: str) -> None:
    """The write-by-write retry after a refused value notes, as the batch does, an event
    not stored because its run was ended meanwhile: that run's next write raises, so its
    desk stops it then instead of at its end."""
    store = PostgresRunStore(postgres_url)
    try:
        store.create_run("ended", None)
        store.finish_run("ended", "failed", None, None, None, _event("ended", source="end"))

        async def step() -> None:  # one batch: a refused value and an ended run's event
            with store._commit_lock:  # the writer thread waits until both are pending
                store.add_event(_event(secrets.token_hex(5_000)))  # too long to index
                store.add_event(_event("ended", source="late"))
            await asyncio.sleep(0.3)
            with pytest.raises(RunNotRunningError):
                store.add_event(_event("ended", source="later"))

        asyncio.run(step())
        assert [e.source for e in store.get_events("ended")] == ["end"]
    finally:
        store.close()


def test_a_job_input_with_nul_does_not_break_later_runs(postgres_url: str, tmp_path: Path) -> None:
    adapter = ScriptedAdapter([reply("first"), reply("second")])
    desk = Desk(model="m", adapter=adapter, database_url=postgres_url, storage_dir=tmp_path)
    try:
        first = desk.run(Worker(name="w"), Job(input=LARGE_WITH_NUL))
        second = desk.run(Worker(name="w"), Job(input="hello"))
        assert (first.status, second.status) == ("completed", "completed")
        record = desk.run_store.get_run(first.run_id)
        assert record is not None and record.status == "completed"
    finally:
        desk.close()
