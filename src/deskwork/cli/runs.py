"""``deskwork runs`` and ``deskwork runs show RUN_ID``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from deskwork.runtime.desk import DB_FILENAME
from deskwork.store.sqlite import SQLiteRunStore

__all__ = ["list_runs", "show_run"]


def _store(storage_dir: str) -> SQLiteRunStore | None:
    path = Path(storage_dir) / DB_FILENAME
    if not path.exists():
        print(f"no run store at {path}", file=sys.stderr)
        return None
    return SQLiteRunStore(path)


def list_runs(storage_dir: str, limit: int = 20) -> int:
    """Print the most recent runs, newest first."""
    store = _store(storage_dir)
    if store is None:
        return 1
    records = store.list_runs(limit)
    store.close()
    if not records:
        print("no runs yet")
        return 0
    print(f"{'RUN ID':<34} {'STATUS':<10} {'UPDATED':<20} OUTPUT")
    for record in records:
        output = (record.output or "").replace("\n", " ")[:50]
        updated = record.updated_at.strftime("%Y-%m-%d %H:%M:%S")
        print(f"{record.run_id:<34} {record.status:<10} {updated:<20} {output}")
    return 0


def show_run(storage_dir: str, run_id: str) -> int:
    """Print one run: status, messages, tool calls and events."""
    store = _store(storage_dir)
    if store is None:
        return 1
    record = store.get_run(run_id)
    if record is None:
        print(f"unknown run {run_id}", file=sys.stderr)
        return 1
    print(f"run {record.run_id}  status={record.status}  created={record.created_at.isoformat()}")
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
    events = store.get_events(run_id)
    store.close()
    for event in events:
        print(f"  {event.timestamp.strftime('%H:%M:%S.%f')[:-3]} {event.type:<28} {event.source}")
    return 0
