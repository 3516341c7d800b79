"""In-memory run store for tests and ephemeral runs."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Sequence
from datetime import datetime
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from deskwork.core._model import trusted
from deskwork.core.event import END_EVENT_BY_STATUS, Event
from deskwork.core.message import Message
from deskwork.core.pending import PendingAction
from deskwork.core.state import RunOwner, RunRecord, RunState
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.core.types import RunStatus
from deskwork.exceptions import RunNotRunningError
from deskwork.store._blobs import MAX_STORED_CHARS, check_sizes, is_plain_json
from deskwork.store._errors import check_event_keys, check_keys, closed_store
from deskwork.store._owner import current_owner
from deskwork.store.base import ENDABLE, RunStore, check_limit, listing_since, pending_action_id
from deskwork.utils import model_json, utc_now

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
    """``event`` as kept: its payload as JSON text (checked against the size limit); one
    with a lone surrogate in a text (``"\\ud800"``, which pydantic-core's JSON neither
    writes nor reads) as ``json.dumps`` writes it (escaped), as the SQL stores keep it."""
    v = event.__dict__  # its fields (one lookup, not six)
    data = v["payload"]
    try:
        payload = to_json(data, inf_nan_mode="null") if data else b"{}"  # as model_dump_json
    except PydanticSerializationError:
        payload = json.dumps(data, default=str).encode()
    if len(payload) > MAX_STORED_CHARS:  # else no text in it is longer (JSON only adds)
        check_sizes(data)
    kind, source = v["type"], v["source"]
    try:  # (no cost unless it raises)
        if _CHECKED_TEXTS[kind] is not source:
            _check_texts(kind, source)
    except KeyError:
        _check_texts(kind, source)
    return (v["event_id"], kind, v["timestamp"], v["run_id"], source, payload)


_CHECKED_TEXTS: dict[str, str] = {}
"""An event type and the source it was last checked with (:func:`_check_texts`). A run's
events repeat a few of each (the built-in types; the worker's and its tools' names, each
one object), so most events are checked by one lookup and one identity test: ~390
instructions an event (callgrind), half of what looking at both texts each time costs."""
_CHECKED_MAX = 1024


def _check_texts(kind: str, source: str) -> None:
    """Refuse a NUL or a lone surrogate in an event's type or source, as the SQL stores do
    (its run id is checked with its run, or with the first event of a log of events alone;
    its id, unless made by hand, is hexadecimal)."""
    check_event_keys(None, kind, source)
    if len(_CHECKED_TEXTS) >= _CHECKED_MAX:  # (many types made on the fly: start again)
        _CHECKED_TEXTS.clear()
    _CHECKED_TEXTS[kind] = source


def _event(item: _StoredEvent) -> Event:
    """The event ``item`` keeps."""
    try:
        return Event.model_validate_json(_event_json(*item))
    except ValueError:  # a lone surrogate in a text: pydantic-core's JSON cannot hold it
        event_id, type, timestamp, run_id, source, payload = item
        return Event(event_id=event_id, type=type, timestamp=timestamp, run_id=run_id,
                     source=source, payload=json.loads(payload))  # fmt: skip


_FINISHED = frozenset(("completed", "failed"))

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


_Finished = tuple[
    str, str, Any, str | None, Any, datetime, datetime, str | None, str | None, RunOwner | None
]  # fmt: skip
"""A finished run as kept: its record's fields in order, the state as its JSON text. A
record with its state is some thirty objects the garbage collector tracks (and walks in its
collections while they are young); this tuple is one."""

_ALL_FIELDS = frozenset(RunRecord.model_fields)


def _scalar(annotation: Any) -> bool:
    """Whether a field of this type holds a value its JSON gives back equal (a text, a
    number, a literal or ``None``)."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
    return all(
        option in (str, int, bool, type(None)) or get_origin(option) is Literal
        for option in options or (annotation,)
    )


_CHECKED: dict[type[BaseModel], tuple[str, ...]] = {
    model: tuple(name for name, f in model.model_fields.items() if not _scalar(f.annotation))
    for model in (RunState, Message, ToolCall, ToolResult, PendingAction)
}
"""The models of a run's state, each with the fields whose values may not come back equal
from its JSON (``Any`` values, nested models). With plain JSON in them, each is validated
back from its own JSON as an equal model (``ToolResult.original_exception``, which its JSON
leaves out, is then ``None``; nested models come back with every field set)."""
_ATOMS = frozenset({str, int, bool, type(None)})


def _round_trips(model: BaseModel) -> bool:
    """Whether ``model`` (of :data:`_CHECKED`) comes back equal from its JSON: every value
    in it is plain JSON or such a model (a tuple, a datetime or a model where a state holds
    ``Any`` would come back changed)."""
    values = model.__dict__
    for name in _CHECKED[type(model)]:
        value = values[name]
        kind = type(value)
        if kind in _ATOMS:
            continue
        if kind is list:
            for item in value:
                if not (_round_trips(item) if type(item) in _CHECKED else is_plain_json(item)):
                    return False
        elif kind is dict:
            if value and not is_plain_json(value):  # (most metadata dicts are empty)
                return False
        elif not (_round_trips(value) if kind in _CHECKED else is_plain_json(value)):
            return False
    return True


def _packed(record: RunRecord) -> _Finished | None:
    """``record`` (a finished run's) as kept, or ``None`` if its state would not come back
    equal from JSON (then the record itself is kept)."""
    state = record.state
    if record.__pydantic_fields_set__ != _ALL_FIELDS:
        return None
    text = None
    if state is not None:
        if type(state) is not RunState or not _round_trips(state):
            return None
        try:
            text = model_json(state)  # the desk dumped it once already
        except PydanticSerializationError:  # a lone surrogate in a text
            return None
    v = record.__dict__
    return (v["run_id"], v["status"], v["input"], v["output"], v["output_json"],
            v["created_at"], v["updated_at"], text, v["runner"], v["owner"])  # fmt: skip


def _unpacked(item: _Finished, *, with_state: bool = True) -> RunRecord:
    """The record ``item`` was packed from (without its state unless ``with_state``)."""
    state = item[7]
    values = dict(zip(_NAMES, item, strict=True))
    values["state"] = RunState.model_validate_json(state) if with_state and state else None
    return trusted(RunRecord, values, set(_ALL_FIELDS))


_NAMES = ("run_id", "status", "input", "output", "output_json", "created_at", "updated_at",
          "state", "runner", "owner")  # fmt: skip
"""The fields of :data:`_Finished`, in order."""


def _record(item: RunRecord | _Finished) -> RunRecord:
    return _unpacked(item) if isinstance(item, tuple) else item


def _listed(item: RunRecord | _Finished) -> RunRecord:
    """``item``'s record as :meth:`InMemoryRunStore.list_runs` gives it: without its state."""
    if isinstance(item, tuple):
        return _unpacked(item, with_state=False)
    return item.model_copy(update={"state": None})


def _status(item: RunRecord | _Finished | None) -> str | None:
    if item is None:
        return None
    return item[1] if isinstance(item, tuple) else item.status


def _updated_at(item: RunRecord | _Finished) -> datetime:
    return item[6] if isinstance(item, tuple) else item.updated_at


def _matches(
    item: RunRecord | _Finished, status: str | None, runner: str | None, since: datetime | None
) -> bool:
    """Whether ``item`` passes :meth:`InMemoryRunStore.list_runs`'s filters."""
    kept_status, kept_runner, updated_at = (
        (item[1], item[8], item[6])
        if isinstance(item, tuple)
        else (item.status, item.runner, item.updated_at)
    )
    return (
        (status is None or kept_status == status)
        and (runner is None or kept_runner == runner)
        and (since is None or updated_at >= since)
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
    serialized when an event is added (the rest is rebuilt when events are read). A finished
    run's record is kept alike, as one tuple with its state as JSON text, rebuilt (equal to
    the record stored) when it is read; a state whose JSON would not give it back equal (one
    holding a tuple or a datetime where it allows ``Any``, say) is kept as it is.

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
        self._runs: dict[str, RunRecord | _Finished] = {}
        """Every run, in the order it was created (a finished one packed when it can be)."""
        self._finished: dict[str, None] = {}
        """The finished runs, in the order they were last updated: the first are dropped."""
        self._events: dict[str, list[_StoredEvent] | tuple[_StoredEvent, ...]] = {}
        """Each run's events: a list only while the run is ``running`` (add_event appends
        to it without looking at the record), else a tuple."""
        self._checkpoints: dict[str, dict[str, bytes]] = {}
        self._lock = threading.RLock()  # re-entrant: reserve_run calls create_run
        self._closed = False

    def close(self) -> None:
        """Keep nothing more: every later call raises :class:`StoreError`, as on the stores
        that persist (a second ``close()`` does nothing)."""
        with self._lock:
            self._closed = True
            for run_id, events in list(self._events.items()):
                if type(events) is list:  # add_event's unlocked append now takes the lock
                    self._close_events(run_id, events)

    def flush(self) -> None:
        if self._closed:
            raise closed_store(None)

    def begin_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        self.create_run(run_id, input_payload, runner=runner)

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        if self._closed:
            raise closed_store(None)
        with self._lock:  # re-entrant: create_run takes it again
            if run_id in self._runs:
                return False
            self.create_run(run_id, input_payload, runner=runner)
            return True

    def create_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        if self._closed:
            raise closed_store(None)
        _check_sizes(input_payload)  # the same limit as the stores that persist
        now = utc_now()
        if type(run_id) is str and (runner is None or type(runner) is str):
            if not (run_id.isascii() and (runner is None or runner.isascii())) or (
                "\x00" in run_id or (runner is not None and "\x00" in runner)
            ):
                check_keys(None, run_id, runner)  # as the stores that persist
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
            self._finished.pop(run_id, None)
            self._events.pop(run_id, None)
            if self.max_runs is not None and len(self._runs) > self.max_runs:
                # drop a tenth more than needed: one drop pays for many runs
                self._drop_finished(len(self._runs) - self.max_runs + self.max_runs // 10)

    def _drop_finished(self, count: int) -> None:
        for run_id in list(itertools.islice(self._finished, count)):
            del self._finished[run_id], self._runs[run_id]
            self._events.pop(run_id, None)
            self._checkpoints.pop(run_id, None)

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        if self._closed:
            raise closed_store(None)
        check_sizes([output, output_json])
        with self._lock:
            item = self._runs.get(run_id)
            if item is None:
                raise KeyError(f"unknown run {run_id!r}")
            update = {"status": status, "output": output, "output_json": output_json,
                      "state": state, "updated_at": utc_now()}  # fmt: skip
            record = _updated(_record(item), update)
            self._finished.pop(run_id, None)
            if status in _FINISHED:
                self._runs[run_id] = _packed(record) or record
                self._finished[run_id] = None  # the newest finished run
            else:
                self._runs[run_id] = record
            events = self._events.get(run_id)
            if status != "running" and type(events) is list:  # it takes no more events
                self._close_events(run_id, events)

    def claim_paused(self, run_id: str, action_id: str | None = None) -> bool:
        if self._closed:
            raise closed_store(None)
        with self._lock:
            record = self._runs.get(run_id)
            if record is None or isinstance(record, tuple) or record.status != "paused":
                return False
            if action_id is not None and pending_action_id(record) != action_id:
                return False
            self._runs[run_id] = _updated(
                record, {"status": "running", "updated_at": utc_now(), "owner": current_owner()}
            )
            return True

    def get_run(self, run_id: str) -> RunRecord | None:
        if self._closed:
            raise closed_store(None)
        with self._lock:
            item = self._runs.get(run_id)
        return None if item is None else _record(item)

    def finish_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
        end_event: Event,
    ) -> None:
        if self._closed:
            raise closed_store(None)
        stored = _stored_event(end_event)  # a refused event leaves the record as it was
        with self._lock:  # a reader sees both or neither
            item = self._runs.get(run_id)
            if item is not None and _status(item) not in ENDABLE:  # (unknown: KeyError)
                raise RunNotRunningError(run_id)
            self.update_run(run_id, status, output, output_json, state)
            # the run's events as one tuple of tuples: none of it tracked by the collector
            self._events[run_id] = (*self._events.get(run_id, ()), stored)

    def _close_events(self, run_id: str, events: list[_StoredEvent]) -> None:
        """Keep a run's open list of events as a tuple: it takes no more (under the lock).

        :meth:`add_event` appends to the list without the lock, then checks the list is still
        the run's: an event appended before the tuple replaces the list is found in it, and
        one appended just before the tuple was made but checked before it was stored is taken
        by the second copy here (appends are atomic; the lock orders everything else).
        """
        closed = tuple(events)
        self._events[run_id] = closed
        if len(events) != len(closed):  # an add_event appended meanwhile: it is stored
            self._events[run_id] = tuple(events)

    def add_event(self, event: Event) -> None:
        stored = _stored_event(event)
        run_id = event.run_id
        events = self._events.get(run_id)
        if type(events) is list:  # the run is running (its event list is open)
            # no lock for the common case (a lock costs as much as the rest of the write)
            events.append(stored)
            if self._events.get(run_id) is events:  # not closed meanwhile
                return
        with self._lock:
            events = self._events.get(run_id)
            if events is not None and any(item is stored for item in events):
                return  # appended before its run's list was closed: kept
            if self._closed:  # (close() closed every open list: the append above missed)
                raise closed_store(None)
            if type(events) is list:  # the run is running
                events.append(stored)
                return
            status = _status(self._runs.get(run_id))
            if status is None:  # a log of events alone: its run id is a key as a run's is
                check_keys(None, run_id)
            if status in (None, "running"):  # its first event, or its first since resumed
                self._events[run_id] = [*(events or ()), stored]
            elif END_EVENT_BY_STATUS.get(status) == event.type:
                self._events[run_id] = (*(events or ()), stored)  # the end it lacked
            else:
                raise RunNotRunningError(run_id)

    def add_event_after_end(self, event: Event) -> bool:
        stored = _stored_event(event)
        run_id = event.run_id
        with self._lock:
            if self._closed:
                raise closed_store(None)
            events = self._events.get(run_id)
            if _status(self._runs.get(run_id)) not in _FINISHED or type(events) is list:
                return False
            self._events[run_id] = (*(events or ()), stored)
            return True

    def get_events(self, run_id: str) -> list[Event]:
        if self._closed:
            raise closed_store(None)
        with self._lock:
            stored = list(self._events.get(run_id, ()))
        return [_event(item) for item in stored]

    def list_runs(
        self,
        limit: int | None = 20,
        *,
        status: str | None = None,
        runner: str | None = None,
        since: datetime | None = None,
    ) -> list[RunRecord]:
        if self._closed:
            raise closed_store(None)
        check_limit(limit)
        since = listing_since(since)
        with self._lock:
            items = sorted(self._runs.values(), key=_updated_at, reverse=True)
        chosen = (_listed(item) for item in items if _matches(item, status, runner, since))
        return list(itertools.islice(chosen, limit))

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        if self._closed:
            raise closed_store(None)
        check_keys(None, thread_id, *(key for key, _ in items))
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
        if self._closed:
            raise closed_store(None)
        check_limit(limit)
        with self._lock:
            thread = self._checkpoints.get(thread_id, {})
            found = sorted((k, v) for k, v in thread.items() if k.startswith(prefix))
        if newest_first:
            found.reverse()
        return found if limit is None else found[:limit]

    def delete_checkpoint_items(self, thread_id: str) -> None:
        if self._closed:
            raise closed_store(None)
        with self._lock:
            self._checkpoints.pop(thread_id, None)
