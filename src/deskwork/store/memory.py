"""In-memory run store for tests and ephemeral runs."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic_core import to_json

from deskwork.core._model import trusted
from deskwork.core.event import Event
from deskwork.core.state import RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.store._blobs import MAX_STORED_CHARS, check_sizes
from deskwork.store._owner import current_owner
from deskwork.store.base import RunStore
from deskwork.utils import utc_now

__all__ = ["InMemoryRunStore"]


DEFAULT_MAX_RUNS = 1000

_StoredEvent = tuple[str, str, datetime, str, str, bytes]
"""An event's fields with its payload as JSON: immutable, and not tracked by the garbage
collector (it holds no containers)."""


def _event_json(
    event_id: str, type: str, timestamp: datetime, run_id: str, source: str, payload: bytes
) -> bytes:
    """The JSON text ``Event.model_dump_json()`` gives for these fields."""
    head = to_json({"event_id": event_id, "type": type, "timestamp": timestamp,
                    "run_id": run_id, "source": source})  # fmt: skip
    return head[:-1] + b',"payload":' + payload + b"}"


def _stored_event(event: Event) -> _StoredEvent:
    """``event`` as kept: its payload as JSON text (checked against the size limit)."""
    payload = to_json(event.payload, inf_nan_mode="null")  # as Event.model_dump_json
    if len(payload) > MAX_STORED_CHARS:  # else no text in it is longer (JSON only adds)
        check_sizes(event.payload)
    return (event.event_id, event.type, event.timestamp, event.run_id, event.source, payload)


_CREATED_FIELDS = frozenset(
    ("run_id", "status", "input", "created_at", "updated_at", "runner", "owner")
)
"""The fields :meth:`InMemoryRunStore.create_run` names when it builds a record."""


def _updated(record: RunRecord, update: dict[str, Any]) -> RunRecord:
    """``record.model_copy(update=update)``, without copying through ``__copy__``: a stored
    record is never changed in place, so the new one is built from its fields."""
    return trusted(
        RunRecord, {**record.__dict__, **update}, record.__pydantic_fields_set__ | update.keys()
    )


def _check_sizes(value: Any) -> None:
    """``check_sizes(value)``, without walking a value whose JSON is short (JSON text is
    never shorter than a string in it)."""
    try:
        if len(to_json(value)) <= MAX_STORED_CHARS:
            return
    except ValueError:  # not JSON (a PydanticSerializationError), or circular: walk it
        pass
    check_sizes(value)


class InMemoryRunStore(RunStore):
    """Keeps records and events in dictionaries; nothing is persisted.

    Events are kept with their payload as JSON text, like a real store: a stored event cannot
    be changed through an object the caller still holds, and thousands of kept events do not
    slow the garbage collector (tuples of texts are not tracked by it). Only the payload is
    serialized when an event is added (the rest is rebuilt when events are read).

    Args:
        max_runs: keep at most this many runs (default 1000) so a long-lived process does
            not grow without bound: when a new run would exceed it, the finished runs
            (``completed``/``failed``) updated longest ago are dropped with their events and
            checkpoints (a tenth of ``max_runs`` more than needed, so a drop is rare).
            Running and paused runs are never dropped (a paused run must stay resumable),
            so the bound can be exceeded while that many are unfinished. ``None`` keeps
            every run.
    """

    def __init__(self, *, max_runs: int | None = DEFAULT_MAX_RUNS) -> None:
        if max_runs is not None and max_runs < 1:
            raise ValueError("max_runs must be >= 1 (or None for no bound)")
        self.max_runs = max_runs
        self._runs: dict[str, RunRecord] = {}
        self._events: dict[str, list[_StoredEvent]] = {}
        self._checkpoints: dict[str, dict[str, bytes]] = {}
        self._lock = threading.RLock()  # re-entrant: reserve_run calls create_run

    def begin_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        self.create_run(run_id, input_payload, runner=runner)

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        with self._lock:  # re-entrant: create_run takes it again
            if run_id in self._runs:
                return False
            self.create_run(run_id, input_payload, runner=runner)
            return True

    def create_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        _check_sizes(input_payload)  # the same limit as the stores that persist
        now = utc_now()
        if type(run_id) is str and (runner is None or type(runner) is str):
            # the fields have their types already: validation would only copy them
            values = {"run_id": run_id, "status": "running", "input": input_payload,
                      "output": None, "output_json": None, "created_at": now,
                      "updated_at": now, "state": None, "runner": runner,
                      "owner": current_owner()}  # fmt: skip
            record = trusted(RunRecord, values, set(_CREATED_FIELDS))
        else:
            record = RunRecord(
                run_id=run_id,
                status="running",
                input=input_payload,
                created_at=now,
                updated_at=now,
                runner=runner,
                owner=current_owner(),
            )
        with self._lock:
            self._runs.pop(run_id, None)  # a re-created id counts as the newest
            self._runs[run_id] = record
            self._events.pop(run_id, None)
            if self.max_runs is not None and len(self._runs) > self.max_runs:
                # drop a tenth more than needed: one sort pays for many runs
                self._drop_finished(len(self._runs) - self.max_runs + self.max_runs // 10)

    def _drop_finished(self, count: int) -> None:
        finished = [r for r in self._runs.values() if r.status in ("completed", "failed")]
        finished.sort(key=lambda r: r.updated_at)
        for record in finished[:count]:
            del self._runs[record.run_id]
            self._events.pop(record.run_id, None)
            self._checkpoints.pop(record.run_id, None)

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        check_sizes([output, output_json])
        with self._lock:
            record = self._runs.get(run_id)
            if record is None:
                raise KeyError(f"unknown run {run_id!r}")
            self._runs[run_id] = _updated(
                record,
                {
                    "status": status,
                    "output": output,
                    "output_json": output_json,
                    "state": state,
                    "updated_at": utc_now(),
                },
            )

    def claim_paused(self, run_id: str) -> bool:
        with self._lock:
            record = self._runs.get(run_id)
            if record is None or record.status != "paused":
                return False
            self._runs[run_id] = _updated(
                record, {"status": "running", "updated_at": utc_now(), "owner": current_owner()}
            )
            return True

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._lock:
            return self._runs.get(run_id)

    def finish_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
        end_event: Event,
    ) -> None:
        stored = _stored_event(end_event)  # a refused event leaves the record as it was
        with self._lock:  # a reader sees both or neither
            self.update_run(run_id, status, output, output_json, state)
            self._events.setdefault(run_id, []).append(stored)

    def add_event(self, event: Event) -> None:
        stored = _stored_event(event)
        with self._lock:
            self._events.setdefault(event.run_id, []).append(stored)

    def get_events(self, run_id: str) -> list[Event]:
        with self._lock:
            stored = list(self._events.get(run_id, ()))
        return [Event.model_validate_json(_event_json(*item)) for item in stored]

    def list_runs(
        self,
        limit: int = 20,
        *,
        status: str | None = None,
        runner: str | None = None,
        since: datetime | None = None,
    ) -> list[RunRecord]:
        with self._lock:
            runs = sorted(self._runs.values(), key=lambda r: r.updated_at, reverse=True)
        chosen = (
            r.model_copy(update={"state": None})
            for r in runs
            if (status is None or r.status == status)
            and (runner is None or r.runner == runner)
            and (since is None or r.updated_at >= since)
        )
        return list(itertools.islice(chosen, max(limit, 0)))

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        with self._lock:
            thread = self._checkpoints.setdefault(thread_id, {})
            for key, value in items:
                if overwrite or key not in thread:
                    thread[key] = bytes(value)

    def get_checkpoint_items(
        self,
        thread_id: str,
        prefix: str = "",
        *,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[tuple[str, bytes]]:
        with self._lock:
            thread = self._checkpoints.get(thread_id, {})
            found = sorted((k, v) for k, v in thread.items() if k.startswith(prefix))
        if newest_first:
            found.reverse()
        return found if limit is None else found[:limit]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        with self._lock:
            self._checkpoints.pop(thread_id, None)
