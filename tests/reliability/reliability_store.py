"""What "the store stays readable and consistent" means, checked on a SQLite run store."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from deskwork.store import SQLiteRunStore


@dataclass
class StoreAudit:
    """What a store holds after the faults."""

    runs: int = 0
    completed: int = 0
    interrupted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def audit(path: Path) -> StoreAudit:
    """Open the store as a fresh process would and check every run's record and events."""
    store = SQLiteRunStore(path)  # raises StoreError on a damaged file
    try:
        result = StoreAudit()
        for record in store.list_runs(limit=100_000):
            result.runs += 1
            events = [e.type for e in store.get_events(record.run_id)]
            # a run killed before its first event was committed has none (it is interrupted)
            if events[:1] != ["run.started"] and (events or record.status != "running"):
                result.problems.append(f"{record.run_id}: events start with {events[:1]}")
            if record.status == "completed":
                result.completed += 1
                if events[-1] != "run.completed" or events.count("tool.completed") != 2:
                    result.problems.append(f"{record.run_id}: completed but events {events}")
                if record.output != "done":
                    result.problems.append(f"{record.run_id}: output {record.output!r}")
            elif record.status == "running":
                result.interrupted.append(record.run_id)
                if "run.completed" in events or "run.failed" in events:
                    result.problems.append(f"{record.run_id}: running but ended: {events}")
            else:
                result.problems.append(f"{record.run_id}: unexpected status {record.status}")
        return result
    finally:
        store.close()
