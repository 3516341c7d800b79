"""``deskwork runs`` (list, ``show RUN_ID``, ``fail RUN_ID``) and ``deskwork doctor``.

The store is the one ``--database-url`` (or ``$DESKWORK_DATABASE_URL``) names, else
``<storage-dir>/deskwork.db``. A damaged or unreachable store is reported in one line with
what to do, never as a traceback; nothing here creates, repairs or overwrites a database.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from deskwork.core.event import Event, EventType
from deskwork.core.state import RunRecord
from deskwork.exceptions import DeskworkError, RunNotRunningError
from deskwork.store._owner import owner_alive, shown_status
from deskwork.store._url import (
    is_postgres,
    open_run_store,
    redact_url,
    resolve_database_url,
    scrub,
    sqlite_path,
)
from deskwork.store.base import RunStore
from deskwork.utils import new_id, utc_now

__all__ = ["ListOptions", "doctor", "fail_run", "list_runs", "parse_since", "show_run"]

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DOCTOR_RUNS = 10_000  # doctor counts the statuses of at most this many recent runs
_ALL = 10**9  # "every run" to a store's list_runs (SQLite's limit stops at 2**63 - 1)


class _NoStore(Exception):
    pass


@dataclass(frozen=True)
class ListOptions:
    """Filters and output format of ``deskwork runs``."""

    limit: int = 20
    status: str | None = None
    runner: str | None = None
    since: datetime | None = None
    as_json: bool = False


def parse_since(text: str) -> datetime:
    """``2h``/``30m``/``1d``/``90s``/``1w`` ago, or an ISO 8601 time (naive means UTC)."""
    match = _DURATION.match(text.strip())
    if match:
        amount, unit = float(match.group(1)), match.group(2)
        try:
            return utc_now() - timedelta(**{_UNITS[unit]: amount})
        except OverflowError:
            return datetime.min.replace(tzinfo=UTC)  # further back than any run
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since {text!r}: use a duration such as 30m, 2h, 1d, or an ISO time"
            " such as 2026-01-31T12:00"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@contextmanager
def _opened(storage_dir: str, database_url: str | None) -> Iterator[RunStore]:
    url = resolve_database_url(database_url, storage_dir)
    path = sqlite_path(url)
    if path is not None and not path.exists():
        print(f"no run store at {path}", file=sys.stderr)
        raise _NoStore
    try:
        store = open_run_store(url)
    except DeskworkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise _NoStore from None
    try:
        yield store
    except DeskworkError as exc:  # damaged or unreachable while reading: one line, no trace
        print(f"error: {exc}", file=sys.stderr)
        raise _NoStore from None
    finally:
        store.close()


def _row(record: RunRecord) -> dict[str, Any]:
    return {
        "run_id": record.run_id,
        "status": shown_status(record),
        "stored_status": record.status,
        "runner": record.runner,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
        "output": record.output,
        "owner": record.owner.model_dump() if record.owner else None,
    }


def list_runs(
    storage_dir: str, options: ListOptions | None = None, *, database_url: str | None = None
) -> int:
    """Print the most recent runs, newest first (``interrupted``: its process is gone)."""
    options = options or ListOptions()
    stored_status = "running" if options.status == "interrupted" else options.status
    try:
        with _opened(storage_dir, database_url) as store:
            records = store.list_runs(
                min(options.limit, _ALL) if options.status != "interrupted" else _ALL,
                status=stored_status,
                runner=options.runner,
                since=options.since,
            )
    except _NoStore:
        return 1
    if options.status == "interrupted":
        records = [r for r in records if shown_status(r) == "interrupted"][: options.limit]
    if options.as_json:
        print(json.dumps([_row(record) for record in records], indent=2, ensure_ascii=False))
        return 0
    if not records:
        print("no runs yet" if options == ListOptions() else "no runs match")
        return 0
    print(f"{'RUN ID':<34} {'STATUS':<12} {'RUNNER':<16} {'UPDATED':<20} OUTPUT")
    for record in records:
        output = (record.output or "").replace("\n", " ")[:40]
        updated = record.updated_at.strftime("%Y-%m-%d %H:%M:%S")
        runner = (record.runner or "-")[:16]
        status = shown_status(record)
        print(f"{record.run_id:<34} {status:<12} {runner:<16} {updated:<20} {output}")
    return 0


def show_run(
    storage_dir: str, run_id: str, *, database_url: str | None = None, as_json: bool = False
) -> int:
    """Print one run: status, messages, tool calls and events."""
    try:
        with _opened(storage_dir, database_url) as store:
            record = store.get_run(run_id)
            events = store.get_events(run_id) if record is not None else []
    except _NoStore:
        return 1
    if record is None:
        print(f"unknown run {run_id}", file=sys.stderr)
        return 1
    if as_json:
        data = record.model_dump(mode="json")
        data["shown_status"] = shown_status(record)
        data["events"] = [event.model_dump(mode="json") for event in events]
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    _print_run(record, events)
    return 0


def _print_run(record: RunRecord, events: list[Event]) -> None:
    print(
        f"run {record.run_id}  status={shown_status(record)}"
        f"  created={record.created_at.isoformat()}"
    )
    state = record.state
    if state is not None:
        print(f"runner: {state.runner_type} {state.runner_name!r}  iterations={state.iteration}")
        print("\nmessages:")
        for message in state.messages:
            calls = ", ".join(c.name for c in message.tool_calls or ())
            suffix = f" (calls: {calls})" if calls else ""
            print(f"  [{message.role}] {message.content}{suffix}")
        print("\ntool calls:")
        for call in state.tool_calls:
            outcome = call.result.model_text() if call.result else "(pending)"
            print(f"  {call.name}({json.dumps(call.arguments)}) -> {outcome}")
        if state.pending_action is not None:
            print(f"\npending: {state.pending_action.type}: {state.pending_action.prompt}")
    if record.output is not None:
        print(f"\noutput: {record.output}")
    print("\nevents:")
    for event in events:
        print(f"  {event.timestamp.strftime('%H:%M:%S.%f')[:-3]} {event.type:<28} {event.source}")


def fail_run(
    storage_dir: str, run_id: str, *, database_url: str | None = None, force: bool = False
) -> int:
    """End a run left ``running`` (or ``paused``) as ``failed``, with a ``run.failed`` event.

    Refuses a run whose process is alive, or runs on another host, unless ``force``.
    """
    try:
        with _opened(storage_dir, database_url) as store:
            record = store.get_run(run_id)
            if record is None:  # a durable run still queued has no record yet
                url = resolve_database_url(database_url, storage_dir)
                return _fail_queued(store, url, run_id)
            problem = _why_not_fail(record, run_id, force)
            if problem or record is None:
                print(problem, file=sys.stderr)
                return 1
            durable = _cancel_durable(resolve_database_url(database_url, storage_dir), run_id)
            if durable is None:
                return 1
            reason = f"ended by 'deskwork runs fail' (was {shown_status(record)})"
            end = _failed_event(run_id, reason)
            try:  # the record and its end together, unless the run ended meanwhile
                store.finish_run(
                    run_id, "failed", record.output, record.output_json, record.state, end
                )
            except RunNotRunningError:
                print(f"run {run_id} ended meanwhile; it is left as it ended", file=sys.stderr)
                return 1
    except _NoStore:
        return 1
    print(
        f"run {run_id} is now failed" + (" (its durable workflow is cancelled)" if durable else "")
    )
    return 0


def _fail_queued(store: RunStore, url: str, run_id: str) -> int:
    """End ``run_id``, which has no record, as failed if it is a durable run still queued
    (its workflow cancelled, so no worker starts it), as ``desk.cancel`` does; else say it
    is unknown."""
    durable = _cancel_durable(url, run_id)
    if not durable:
        if durable is not None:
            print(f"unknown run {run_id}", file=sys.stderr)
        return 1
    if not store.reserve_run(run_id, None):  # a worker recorded it meanwhile: not replaced
        print(f"run {run_id} was started meanwhile; it is left as it is", file=sys.stderr)
        return 1
    end = _failed_event(run_id, "ended by 'deskwork runs fail' (was queued)")
    try:
        store.finish_run(run_id, "failed", None, None, None, end)
    except RunNotRunningError:  # a worker started and ended it meanwhile
        print(f"run {run_id} ended meanwhile; it is left as it ended", file=sys.stderr)
        return 1
    print(f"run {run_id} is now failed (its durable workflow is cancelled before it started)")
    return 0


def _failed_event(run_id: str, reason: str) -> Event:
    return Event(
        event_id=new_id(),
        type=EventType.RUN_FAILED,
        timestamp=utc_now(),
        run_id=run_id,
        source="deskwork runs fail",
        payload={"errors": [reason]},
    )


def _cancel_durable(url: str, run_id: str) -> bool | None:
    """Cancel the DBOS workflow of ``run_id`` when the database is durable, so no worker
    continues the run after it is failed: ``True`` if cancelled, ``False`` if the run has
    no durable workflow, ``None`` (after printing why) if the cancel failed."""
    try:
        from deskwork.runtime._durable import cancel_in_database
    except ImportError:  # no dbos extra: no durable runs here
        return False
    try:
        return cancel_in_database(url, run_id)
    except Exception as exc:
        if is_postgres(url) and "workflow_status" in str(exc):
            return False  # no DBOS tables in this database: it never ran durable runs
        print(
            f"error: cannot cancel the durable workflow of {run_id} on {redact_url(url)}:"
            f" {type(exc).__name__}: {scrub(str(exc), url)}",
            file=sys.stderr,
        )
        return None


def _why_not_fail(record: RunRecord | None, run_id: str, force: bool) -> str:
    if record is None:
        return f"unknown run {run_id}"
    if record.status in ("completed", "failed"):
        return f"run {run_id} already ended ({record.status})"
    owner = record.owner
    if force or record.status != "running" or owner is None:
        return ""
    alive = owner_alive(owner)
    if alive is False:
        return ""
    where = "is still running in" if alive else "may still be running in"
    return (
        f"run {run_id} {where} process {owner.pid} on {owner.host};"
        " stop that process first, or use --force"
    )


def doctor(storage_dir: str, *, database_url: str | None = None) -> int:
    """Check the store: reachable, sound (SQLite ``integrity_check``), runs by status."""
    url = resolve_database_url(database_url, storage_dir)
    print(f"database: {redact_url(url)}")
    path = sqlite_path(url)
    if path is not None:
        problems = _sqlite_problems(path)
        if problems:
            for problem in problems:
                print(f"  problem: {problem}")
            print("damaged: restore the file from a backup, or move it away to start a new store")
            return 1
    try:
        with _opened(storage_dir, database_url) as store:
            records = store.list_runs(_DOCTOR_RUNS)
            versions = _schema_versions(store)
    except _NoStore:
        return 1
    counts: dict[str, int] = {}
    for record in records:
        status = shown_status(record)
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no runs"
    scope = f" (the latest {_DOCTOR_RUNS:,})" if len(records) == _DOCTOR_RUNS else ""
    print(f"integrity: ok\nschema: {versions}\nruns{scope}: {summary}")
    if counts.get("interrupted"):
        print("interrupted runs: end them with 'deskwork runs fail RUN_ID'")
    return 0


def _schema_versions(store: RunStore) -> str:
    """``runs v3, sessions v1`` from the store's ``deskwork_schema`` table."""
    from deskwork.store.postgres import PostgresRunStore
    from deskwork.store.sqlite import SQLiteRunStore

    found: dict[str, int] = {}
    if isinstance(store, SQLiteRunStore):
        with store._db.locked() as conn:
            found = dict(conn.execute("SELECT component, version FROM deskwork_schema"))
    elif isinstance(store, PostgresRunStore):
        found = store.database.schema_versions()
    return ", ".join(f"{name} v{version}" for name, version in sorted(found.items())) or "-"


def _sqlite_problems(path: Any) -> list[str]:
    import sqlite3

    from deskwork.store._sqlite import integrity_problems

    if not path.is_file():
        return []  # missing or a directory: reported by _opened
    if path.stat().st_size == 0:
        return ["the file is empty: it was truncated or never written"]
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return [str(exc)]
    try:
        return integrity_problems(conn, quick=False)
    finally:
        conn.close()
