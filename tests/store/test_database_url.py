"""One database URL configures the run, session and memory stores (issue 10): SQLite by
default, PostgreSQL by URL or ``DESKWORK_DATABASE_URL``; schemas migrate forward."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deskwork import ConfigurationError, Desk, Job, MissingExtraError, Worker
from deskwork.memory import InMemoryMemoryStore, PostgresMemoryStore
from deskwork.store import PostgresRunStore, PostgresSessionStore, SQLiteRunStore, StoreError
from deskwork.store._url import open_run_store, redact_url, scrub
from deskwork.testing import ScriptedAdapter, reply


def _desk(tmp_path: Path, **kwargs: Any) -> Desk:
    adapter = ScriptedAdapter([reply("hello")])
    return Desk(model="m", adapter=adapter, storage_dir=tmp_path, **kwargs)


def test_postgres_url_puts_every_store_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    with _desk(tmp_path, database_url=postgres_url) as desk:
        report = desk.run(Worker(name="analyst"), Job(input="go"))
        assert report.status == "completed", report.errors
        assert isinstance(desk.run_store, PostgresRunStore)
        assert isinstance(desk.session_store, PostgresSessionStore)
        assert isinstance(desk.memory_store, PostgresMemoryStore)
        assert desk.run_store.database is desk.session_store.database  # one pool per URL
    assert not (tmp_path / "deskwork.db").exists()
    other = PostgresRunStore(postgres_url)  # another process's view
    record = other.get_run(report.run_id)
    assert record is not None and record.status == "completed" and record.output == "hello"
    assert record.runner == "analyst"
    assert [e.type for e in other.get_events(report.run_id)] == [e.type for e in report.events]
    memory = PostgresMemoryStore(postgres_url)
    assert memory.read("last_output", "worker:analyst") == "hello"
    memory.close()
    other.close()


def test_environment_variable_is_read_when_no_url_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKWORK_DATABASE_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    desk = _desk(tmp_path / "unused")
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert isinstance(desk.run_store, SQLiteRunStore)
    assert desk.run_store.path == tmp_path / "elsewhere.db"
    assert desk.run_store.get_run(report.run_id) is not None
    assert isinstance(desk.memory_store, InMemoryMemoryStore)
    desk.close()
    explicit = _desk(tmp_path, database_url=f"sqlite:///{tmp_path / 'given.db'}")
    assert isinstance(explicit.run_store, SQLiteRunStore)
    assert explicit.run_store.path == tmp_path / "given.db"  # the argument wins
    explicit.close()


def test_default_is_sqlite_under_the_storage_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DESKWORK_DATABASE_URL", raising=False)
    desk = _desk(tmp_path / "dir")
    assert desk.database_url == f"sqlite:///{tmp_path / 'dir' / 'deskwork.db'}"


def test_unreachable_database_names_the_url_without_its_password(tmp_path: Path) -> None:
    url = "postgresql://deskwork:s3cret-pw@127.0.0.1:1/nowhere"
    desk = _desk(tmp_path, database_url=url)  # cheap: nothing connects yet
    with pytest.raises(ConfigurationError) as caught:
        desk.run(Worker(name="w"), Job(input="go"))
    message = str(caught.value)
    assert "postgresql://deskwork:<redacted>@127.0.0.1:1/nowhere" in message  # one spelling
    assert "s3cret-pw" not in message
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
    echoed = scrub('password authentication failed: "s3cret-pw"', url)  # a driver's message
    assert echoed == 'password authentication failed: "<redacted>"'


def test_a_malformed_url_does_not_echo_its_password(tmp_path: Path) -> None:
    url = "postgresql://deskwork:s3cret-pw@127.0.0.1:5432/test?sslmode=nonsense"
    with pytest.raises(ConfigurationError) as caught:
        PostgresRunStore(url)
    assert "s3cret-pw" not in str(caught.value) and "sslmode" in str(caught.value)


def test_unsupported_urls_are_configuration_errors(tmp_path: Path) -> None:
    for url in ("mysql://u:pw@h/db", "sqlite://", "deskwork.db"):
        with pytest.raises(ConfigurationError, match="unsupported database URL"):
            _desk(tmp_path, database_url=url)


def test_missing_postgres_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError, match=r"deskwork\[postgres\]"):
        PostgresRunStore("postgresql://postgres@127.0.0.1:5432/never-opened")


def test_import_deskwork_does_not_import_psycopg() -> None:
    code = (
        "import sys, deskwork, deskwork.store, deskwork.memory\n"
        "from deskwork.store import StoreError\n"
        "assert 'psycopg' not in sys.modules, 'psycopg imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _execute(url: str, statement: str) -> None:
    """Run one SQL statement on the database of ``url`` (as another tool would)."""
    if url.startswith("sqlite"):
        from deskwork.store._sqlite import SQLiteDatabase

        lite = SQLiteDatabase(Path(url[len("sqlite:///") :]))
        lite.conn.execute(statement)
        lite.close()
        return
    from deskwork.store.postgres import PostgresDatabase

    pg = PostgresDatabase.shared(url)
    with pg.connection() as conn:
        conn.execute(statement)
    pg.release()


def _migrate_to_version_1(url: str) -> None:
    if url.startswith("sqlite"):
        from deskwork.store._sqlite import SQLiteDatabase
        from deskwork.store.sqlite import _MIGRATIONS

        lite = SQLiteDatabase(Path(url[len("sqlite:///") :]))
        lite.migrate("runs", _MIGRATIONS[:1])
        lite.close()
        return
    from deskwork.store.postgres import _RUN_MIGRATIONS, PostgresDatabase

    pg = PostgresDatabase.shared(url)
    pg.migrate("runs", _RUN_MIGRATIONS[:1])
    pg.release()


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_an_older_schema_migrates_forward_and_keeps_its_runs(database_url: str) -> None:
    _migrate_to_version_1(database_url)  # a database written by the first release
    table = "runs" if database_url.startswith("sqlite") else "deskwork_runs"
    _execute(
        database_url,
        f"INSERT INTO {table} (run_id, status, created_at, updated_at) VALUES ('old',"
        " 'completed', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')",
    )
    store = open_run_store(database_url)
    record = store.get_run("old")
    assert record is not None and record.status == "completed" and record.runner is None
    store.begin_run("new", None, runner="r")  # the columns version 2 added work
    assert [r.runner for r in store.list_runs()] == ["r", None]
    store.close()


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_a_newer_schema_is_refused_with_a_clear_error(database_url: str) -> None:
    open_run_store(database_url).close()
    _execute(database_url, "UPDATE deskwork_schema SET version=99 WHERE component='runs'")
    with pytest.raises(StoreError, match=r"schema version 99.*upgrade deskwork"):
        open_run_store(database_url)


def test_a_connection_the_server_dropped_is_replaced_on_checkout(postgres_url: str) -> None:
    import psycopg

    store = PostgresRunStore(postgres_url)
    store.create_run("r", None)
    with store.database.connection() as conn:
        pid = conn.info.backend_pid
    with psycopg.connect(postgres_url, autocommit=True) as admin:  # the server drops it
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    record = store.get_run("r")  # no error: the pool checked and replaced the connection
    assert record is not None and record.status == "running"
    with store.database.connection() as conn:
        assert conn.info.backend_pid != pid
    store.close()


def test_a_connection_lost_while_in_use_is_a_store_error(postgres_url: str) -> None:
    import psycopg

    store = PostgresRunStore(postgres_url)
    lost = pytest.raises(StoreError, match="cannot be reached")
    with lost as caught, store.database.connection() as conn:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        conn.execute("SELECT 1")
    assert caught.value.location is not None and "127.0.0.1" in caught.value.location
    assert store.get_run("missing") is None  # the pool goes on with a new connection
    store.close()


def test_runs_cli_reads_a_postgres_store(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from deskwork.cli import main

    store = PostgresRunStore(postgres_url)
    store.create_run("pg-run", {"input": "x"}, runner="alpha")
    store.update_run("pg-run", "completed", "done", None, None)
    store.close()
    assert main(["runs", "--database-url", postgres_url, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["run_id"], r["status"], r["runner"]) for r in rows] == [
        ("pg-run", "completed", "alpha")
    ]
    assert main(["doctor", "--database-url", postgres_url]) == 0
    out = capsys.readouterr().out
    assert "integrity: ok" in out and "1 completed" in out


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_two_processes_share_one_database(database_url: str) -> None:
    """Two stores on one database (two processes in real life) see each other's writes at
    once, and only one of them can claim a pause."""
    from deskwork import RunState

    first, second = open_run_store(database_url), open_run_store(database_url)
    first.begin_run("r", {"input": "x"}, runner="w")
    state = RunState(run_id="r", status="paused", runner_type="worker", runner_name="w", job={})
    first.update_run("r", "paused", None, None, state)
    seen = second.get_run("r")
    assert seen is not None and seen.status == "paused" and seen.state == state
    assert second.claim_paused("r") is True
    assert first.claim_paused("r") is False
    first.close()
    second.close()


def test_a_pause_on_postgres_is_resumed_by_another_desk_once(
    tmp_path: Path, postgres_url: str
) -> None:
    from deskwork.testing import call_tool
    from deskwork.tools import tool

    done: list[str] = []

    @tool(requires_confirmation=True)
    def ship(order: str) -> str:
        done.append(order)
        return f"shipped {order}"

    worker = Worker(name="clerk", tools=[ship])
    first = Desk(
        model="m",
        adapter=ScriptedAdapter([call_tool("ship", order="A1")]),
        database_url=postgres_url,
        storage_dir=tmp_path,
    )
    paused = first.run(worker, Job(input="ship A1"))
    assert paused.status == "paused"
    first.close()
    later = Desk(  # another process, after a restart
        model="m", adapter=ScriptedAdapter([reply("shipped")]), database_url=postgres_url
    )
    report = later.resume(paused.run_id, True, runner=worker)
    assert report.status == "completed" and report.content == "shipped", report.errors
    assert done == ["A1"]
    record = later.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "completed"
    again = later.resume(paused.run_id, True, runner=worker)  # not paused any more
    assert again.status == "failed" and done == ["A1"]
    later.close()


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_processes_opening_a_new_database_together_migrate_it_once(database_url: str) -> None:
    code = (
        "import sys\n"
        "from deskwork.store._url import open_run_store, open_session_store\n"
        "runs, sessions = open_run_store(sys.argv[1]), open_session_store(sys.argv[1])\n"
        "runs.begin_run(sys.argv[2], None, runner='w')\n"
        "runs.close(); sessions.close()\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, database_url, f"run{n}"]) for n in range(3)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    store = open_run_store(database_url)
    assert sorted(r.run_id for r in store.list_runs()) == ["run0", "run1", "run2"]
    store.close()
