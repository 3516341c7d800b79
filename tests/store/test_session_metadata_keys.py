"""Session metadata a SessionRecord refuses (a key that is not a text: ``1``, or ``1`` and
``"1"``) is refused by every session store alike, before anything is stored: the session id
stays free, where PostgreSQL and SQLite kept the row and then raised (or PostgreSQL raised
to_jsonable's ValueError, which a caller takes for "session exists")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from deskwork.store.session import InMemorySessionStore, SessionStore, SQLiteSessionStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "memory":
        store: SessionStore = InMemorySessionStore()
    elif request.param == "sqlite":
        store = SQLiteSessionStore(tmp_path / "sessions.db")
    else:
        from deskwork.store.postgres import PostgresSessionStore

        store = PostgresSessionStore(request.getfixturevalue("postgres_url"))
    yield store
    store.close()


@pytest.mark.parametrize(
    "metadata", [{1: "a", "1": "b"}, {1: "a"}, {True: "a"}], ids=["colliding", "int", "bool"]
)
def test_metadata_with_a_key_not_a_text_is_refused_and_nothing_is_stored(
    sessions: SessionStore, metadata: dict[Any, str]
) -> None:
    with pytest.raises(ValidationError, match="valid string"):
        sessions.create_session("s1", "w", metadata)
    assert sessions.get_session("s1") is None
    record = sessions.create_session("s1", "w", {"topic": "billing"})  # the id is still free
    assert record.metadata == {"topic": "billing"}
