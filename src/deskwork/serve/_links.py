"""Parent and child runs, as the run store records them.

A run started inside another run records its parent in its ``run.started`` event
(``payload["parent_run_id"]``): the desk does so for runs started while a run executes
(subworkers, tools that call ``desk.arun``), and the durable fan-out for the members it
hands to other workers, whose parent also lists them in its ``fanout.started`` event. Any
process that shares the store (the one that started the runs or not) sees the same links.

The store has no index from a parent to its children, so children are found among the runs
created while the parent was alive (at most ``scan_limit`` of them, most recent first); a
run's parent never changes, so each run's is read once and remembered.
"""

from __future__ import annotations

from deskwork.core.event import Event, EventType
from deskwork.core.state import RunRecord
from deskwork.store.base import RunStore

__all__ = ["FANOUT_STARTED", "RunLinks"]

FANOUT_STARTED = "fanout.started"
"""The durable fan-out's event in the parent: ``{"members": [{"run_id", ...}]}``."""


def parent_of(events: list[Event]) -> str | None:
    """The parent named by the run's ``run.started`` event (``None``: a top-level run)."""
    for event in events:
        if event.type == EventType.RUN_STARTED:
            parent = event.payload.get("parent_run_id")
            return parent if isinstance(parent, str) else None
    return None


def fanned_out(events: list[Event]) -> list[str]:
    """The child runs a run's ``fanout.started`` events list."""
    found: list[str] = []
    for event in events:
        if event.type == FANOUT_STARTED:
            members = event.payload.get("members")
            for member in members if isinstance(members, list) else []:
                run_id = member.get("run_id") if isinstance(member, dict) else None
                if isinstance(run_id, str):
                    found.append(run_id)
    return found


class RunLinks:
    """Reads parent and child runs from a run store, remembering each run's parent."""

    def __init__(self, store: RunStore, *, scan_limit: int = 500, remember: int = 10_000) -> None:
        self.store = store
        self.scan_limit = scan_limit
        self._remember = remember
        self._parents: dict[str, str | None] = {}

    def parent(self, run_id: str, events: list[Event] | None = None) -> str | None:
        """The run ``run_id`` was started in, or ``None``."""
        if run_id in self._parents:
            return self._parents[run_id]
        events = self.store.get_events(run_id) if events is None else events
        if not any(e.type == EventType.RUN_STARTED for e in events):
            return None  # not started yet (or not by a desk): ask again later
        parent = parent_of(events)
        if len(self._parents) >= self._remember:
            del self._parents[next(iter(self._parents))]
        self._parents[run_id] = parent
        return parent

    def children(self, record: RunRecord, events: list[Event]) -> list[str]:
        """The runs started inside ``record``'s run, oldest first."""
        found = fanned_out(events)
        candidates = self.store.list_runs(self.scan_limit, since=record.created_at)
        for other in sorted(candidates, key=lambda r: r.created_at):
            if other.run_id == record.run_id or other.run_id in found:
                continue
            if other.created_at >= record.created_at and self.parent(other.run_id) == record.run_id:
                found.append(other.run_id)
        return found
