"""PostgreSQL: a piped transaction (``PostgresDatabase.transaction(piped=True)``: the
statements sent together, one round trip) stores all of its statements or none, also when
the error is raised on the client (a value psycopg refuses to send, an exception of the
caller's block) after some statements were queued; and a batch with a refused value,
committed by ``finish_run``, stores each of the other events once."""

from __future__ import annotations

import asyncio
import secrets
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest

from deskwork import Event
from deskwork.store import StoreError
from deskwork.store.postgres import PostgresDatabase, PostgresRunStore
from deskwork.utils import utc_now

TOO_LONG_ID = secrets.token_hex(5_000)  # over the ~2.7 KB an index row holds (not compressible)


def _rows(url: str) -> list[Any]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT x FROM piped_t ORDER BY x").fetchall()


@pytest.mark.parametrize("failure", ["refused value", "caller's exception"])
def test_a_client_side_error_in_a_piped_transaction_stores_nothing(
    postgres_url: str, failure: str
) -> None:
    db = PostgresDatabase(postgres_url)
    try:
        with db.connection() as conn:
            conn.execute("CREATE TABLE piped_t (x INT, s TEXT)")
        with pytest.raises((StoreError, RuntimeError)), db.transaction(piped=True) as conn:
            conn.execute("INSERT INTO piped_t VALUES (1, 'queued first')")
            if failure == "refused value":  # psycopg refuses it before sending it
                conn.execute("INSERT INTO piped_t VALUES (2, %s)", ("nul \x00 in text",))
            raise RuntimeError("the caller's block failed")
        assert _rows(postgres_url) == []
        with db.transaction(piped=True) as conn:  # the connection is usable again
            conn.execute("INSERT INTO piped_t VALUES (3, 'ok')")
        assert _rows(postgres_url) == [(3,)]
    finally:
        db.pool.close()


def _event(run_id: str, n: int, source: str = "s") -> Event:
    return Event(
        event_id=f"{run_id}-{n}", type="custom", timestamp=utc_now(), run_id=run_id,
        source=source, payload={"n": n},
    )  # fmt: skip


def test_finish_run_after_a_refused_event_stores_the_others_once(postgres_url: str) -> None:
    store = PostgresRunStore(postgres_url)
    # no writer thread: the events stay pending until finish_run commits them (deterministic)
    store._writer = SimpleNamespace(submit=lambda fn: None, shutdown=lambda wait: None)  # type: ignore[assignment]
    try:
        store.create_run("r", None)

        async def step() -> None:
            store.add_event(_event("r", 1))
            store.add_event(_event(TOO_LONG_ID, 2))  # refused: longer than its index holds

        asyncio.run(step())
        with pytest.raises(StoreError, match="refused a value"):
            store.finish_run("r", "completed", "done", None, None, _event("r", 3))
        assert [e.event_id for e in store.get_events("r")] == ["r-1"]
    finally:
        store.close()
