"""PostgreSQL: the pool's checkout check (``_check``, no round trip for an idle connection)
also works where the ``select`` module has no ``poll`` (Windows): an idle connection is
handed out, one the server dropped is refused so the pool replaces it."""

from __future__ import annotations

import select

import psycopg
import pytest

from deskwork.store import postgres as pg


def test_the_checkout_check_works_without_select_poll(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = psycopg.connect(postgres_url, autocommit=True)
    try:
        monkeypatch.delattr(select, "poll", raising=False)  # as on Windows
        pg._check(conn)  # idle: nothing to read, handed out as it is
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        # until the server's error reaches the socket (a wait, not a timing assertion)
        assert select.select([conn.pgconn.socket], [], [], 30)[0]
        with pytest.raises(psycopg.OperationalError):
            pg._check(conn)  # dropped: the pool replaces it
    finally:
        conn.close()
