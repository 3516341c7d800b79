"""The run store port."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from deskwork.core.event import END_EVENT_BY_STATUS, Event
from deskwork.core.state import RunRecord, RunState
from deskwork.core.types import RunStatus
from deskwork.exceptions import ConfigurationError, RunNotRunningError
from deskwork.utils import is_integer

__all__ = ["ENDABLE", "RunStore"]

ENDABLE = frozenset(("running", "paused"))
"""The statuses of a run whose end :meth:`RunStore.finish_run` stores."""
IF_ENDABLE_SQL = " AND status IN ('running', 'paused')"
""":data:`ENDABLE` as the SQL stores' ``finish_run`` condition."""
STATUS_BY_END: dict[str, str] = {end: status for status, end in END_EVENT_BY_STATUS.items()}
"""A run's status by its end event's type."""


def raise_if_refused(refused: set[str], run_id: str) -> None:
    """Raise :class:`RunNotRunningError` if a commit refused events of ``run_id`` (noted in
    ``refused``), once: the desk stops the run then."""
    if run_id in refused:
        refused.discard(run_id)
        raise RunNotRunningError(run_id)


def pending_action_id(record: RunRecord) -> str | None:
    """The action id of the pause ``record``'s state waits for (``None`` without one)."""
    action = record.state.pending_action if record.state is not None else None
    return action.action_id if action is not None else None


def check_limit(limit: int | None) -> None:
    """Raise :class:`ConfigurationError` for a ``limit`` of a listing that is neither ``None``
    (no limit) nor a whole number 0 .. 2**63 - 1, the same on every store (SQLite read a
    negative one as no limit and refused a float, PostgreSQL raised its driver's error or
    rounded 1.5, the in-memory store listed none)."""
    if limit is not None and not (is_integer(limit) and 0 <= limit <= BIGINT_MAX):
        raise ConfigurationError(
            f"a limit must be 0 or more (a whole number up to 2**63 - 1, or None), not {limit!r}"
        )


def listing_since(since: datetime | None) -> datetime | None:
    """``since`` of a listing as a timezone-aware time, the same on every store: a naive one
    is the local time (as ``datetime.astimezone`` reads it; PostgreSQL read it in the
    server's time zone and the in-memory store raised ``TypeError``); anything but a
    ``datetime`` or ``None`` is a :class:`ConfigurationError`."""
    if since is None:
        return None
    if not isinstance(since, datetime):
        raise ConfigurationError(f"since must be a datetime or None, not {since!r}")
    return since if since.utcoffset() is not None else since.astimezone()


BIGINT_MAX = 2**63 - 1
"""The largest limit of a listing: a database's ``bigint`` (SQLite's and PostgreSQL's LIMIT)."""


class RunStore(ABC):
    """Persists run records, resume state and the ordered event log of each run.

    A run's events are written only while its record is ``running``, so nothing lands after
    its end, even when the end was stored by another process (``desk.cancel`` while a
    ``deskwork worker`` runs it). The built-in stores decide it in the write itself (no
    extra read):

    - :meth:`add_event` stores an event only if the run's record is ``running``. The one
      exception: an end event (``run.completed``, ``run.failed``, ``run.paused``) is also
      stored when the record has that end's status already (a record ended without its end
      event: a store that failed between the two, or a :meth:`finish_run` that writes them
      apart). An event of a run with no record is stored (a log of events alone).
    - :meth:`finish_run` stores the run's end only if its record is ``running`` or
      ``paused`` (a paused run is ended by a cancel or ``deskwork runs fail``): a run that
      completed is never turned ``failed`` by a cancel that comes too late, nor the reverse.
    - A refused write stores nothing and raises :class:`~deskwork.exceptions.RunNotRunningError`
      (the desk's emitter then stops the run). An event that the SQLite and PostgreSQL stores
      commit later (added inside an event loop) and find refused then is dropped, and the
      run's next :meth:`add_event` or :meth:`finish_run` raises. A :meth:`finish_run`
      refused itself is that raise: nothing of the run stays noted or pending after it.

    :meth:`add_event_after_end` is the one way to add to a finished run's log: a custom
    event emitted for it after its end (a user's feedback, a late note of a tool), stored
    after the end event, only if the record is ``completed`` or ``failed``. The desk calls
    it only for custom events of runs whose end it stored itself; a run's own events never
    go through it.

    Every event of a run's life arrives while it is ``running``: ``run.started`` after
    :meth:`begin_run`, ``run.resumed`` after :meth:`claim_paused`, ``run.recovered`` and
    ``run.unrecoverable`` for a run whose process died (still ``running``), and its end with
    :meth:`finish_run`. :meth:`create_run`, :meth:`update_run` and :meth:`claim_paused` are
    not conditional.

    After :meth:`close`, every call (a read, a write, :meth:`flush`) raises
    :class:`~deskwork.exceptions.StoreError` ("... is closed"), on every built-in store, and
    a second :meth:`close` does nothing.
    """

    @abstractmethod
    def create_run(self, run_id: str, input_payload: Any) -> None:
        """Record a new run with status ``running``.

        The built-in stores also accept ``runner=NAME`` and record the owning process.
        """

    def begin_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> None:
        """Record a new run started by the runner named ``runner`` (the desk calls this).

        The default calls :meth:`create_run` without the runner, so custom stores written
        against the two-argument ``create_run`` keep working; the built-in stores record
        the runner (``deskwork runs --runner`` filters on it) and the owning process.
        """
        self.create_run(run_id, input_payload)

    def reserve_run(self, run_id: str, input_payload: Any, *, runner: str | None = None) -> bool:
        """Record a new run only if no run has ``run_id`` yet; ``False`` if one has.

        The desk calls this for a run id the caller chose (an idempotency key), so two
        processes starting the same id cannot both run it. The built-in stores decide it in
        one atomic write; this default (for custom stores) checks, then records.
        """
        if self.get_run(run_id) is not None:
            return False
        self.begin_run(run_id, input_payload, runner=runner)
        return True

    @abstractmethod
    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        """Store the run's status, output and (for resumable runs) its state."""

    def finish_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
        end_event: Event,
    ) -> None:
        """Store the run's end: its record (as :meth:`update_run`) and its end event
        (``run.completed``, ``run.failed`` or ``run.paused``) together; the desk calls this.

        The built-in stores write both in one transaction, so no reader and no crash sees a
        run ended without its end event, or the event without the record; and only if the
        record is ``running`` or ``paused`` (else :class:`RunNotRunningError`, nothing
        stored; ``KeyError`` for an unknown run). This default (for custom stores) checks
        the record, then calls :meth:`update_run`, then :meth:`add_event` (not atomic).
        """
        record = self.get_run(run_id)
        if record is None:
            raise KeyError(f"unknown run {run_id!r}")
        if record.status not in ENDABLE:
            raise RunNotRunningError(run_id)
        self.update_run(run_id, status, output, output_json, state)
        self.add_event(end_event)

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or ``None``."""

    @abstractmethod
    def add_event(self, event: Event) -> None:
        """Append an event to its run's log (while the run is ``running``: see the class).

        Raises:
            RunNotRunningError: the run is not running (or this store found so while
                committing an earlier event of it later): nothing was stored.
        """

    def add_event_after_end(self, event: Event) -> bool:
        """Append ``event`` to the log of its finished run, after the run's end event, if
        the run's record is ``completed`` or ``failed`` (decided in the write itself);
        ``False``, nothing stored, for a run that is running, paused or unknown. The
        record (status, output, ``updated_at``) is unchanged.

        The default (for custom stores) stores nothing and returns ``False``: the desk then
        only delivers such an event to the bus's handlers.
        """
        return False

    @abstractmethod
    def get_events(self, run_id: str) -> list[Event]:
        """The run's events in the order they were added."""

    def claim_paused(self, run_id: str, action_id: str | None = None) -> bool:
        """Atomically move a paused run to ``running``, owned by this process; ``False`` if it
        was not paused, or, with ``action_id``, if its pause is not that action (its state's
        ``pending_action``) any more.

        Stops two processes from resuming the same pause (which could repeat a tool call),
        and a resume that checked its answer against one pause from claiming the next one
        (another resume answered the first meanwhile and the run paused again).
        The default is not atomic; stores shared between processes override it.
        """
        record = self.get_run(run_id)
        if record is None or record.status != "paused":
            return False
        if action_id is not None and pending_action_id(record) != action_id:
            return False
        self.update_run(run_id, "running", record.output, record.output_json, record.state)
        return True

    def list_runs(
        self,
        limit: int | None = 20,
        *,
        status: str | None = None,
        runner: str | None = None,
        since: datetime | None = None,
    ) -> list[RunRecord]:
        """The most recently updated runs, newest first, without their state.

        Args:
            limit: at most this many; ``None`` lists every run. One that is no whole
                number 0 .. 2**63 - 1 (``-1``, ``1.5``, ``True``) raises
                :class:`~deskwork.exceptions.ConfigurationError`.
            status: only runs with this stored status (``running``, ``paused``, ...).
            runner: only runs started by the runner of this name.
            since: only runs updated at or after this time (a naive one is local time).
                One that is no ``datetime`` raises
                :class:`~deskwork.exceptions.ConfigurationError`.

        Stores may override; the default lists none.
        """
        check_limit(limit)
        listing_since(since)
        return []

    # -- checkpoints: opaque, key-ordered items per thread (LangGraph checkpoints of a run) --

    def put_checkpoint_items(
        self, thread_id: str, items: Sequence[tuple[str, bytes]], *, overwrite: bool = True
    ) -> None:
        """Store ``(key, value)`` items of ``thread_id``; ``overwrite=False`` keeps existing keys.

        Keys are compared by code point (bytewise for UTF-8), so a store must order them that way.
        """
        raise NotImplementedError(f"{type(self).__name__} does not store checkpoints")

    def get_checkpoint_items(
        self,
        thread_id: str,
        prefix: str = "",
        *,
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[tuple[str, bytes]]:
        """The items of ``thread_id`` whose key starts with ``prefix``, ordered by key.

        At most ``limit`` of them; ``None`` gives every one. A limit that is no whole number
        0 .. 2**63 - 1 (``-1``, ``1.5``, ``True``) raises
        :class:`~deskwork.exceptions.ConfigurationError`.
        """
        raise NotImplementedError(f"{type(self).__name__} does not store checkpoints")

    def delete_checkpoint_items(self, thread_id: str) -> None:
        """Forget every item of ``thread_id``."""
        raise NotImplementedError(f"{type(self).__name__} does not store checkpoints")

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Make buffered writes durable (no-op for stores that write through)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Commit what is pending and release resources (see the class: a closed store)."""
