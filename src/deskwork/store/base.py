"""The run store port."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from deskwork.core.event import Event
from deskwork.core.state import RunRecord, RunState
from deskwork.core.types import RunStatus

__all__ = ["RunStore"]


class RunStore(ABC):
    """Persists run records, resume state and the ordered event log of each run."""

    @abstractmethod
    def create_run(self, run_id: str, input_payload: Any) -> None:
        """Record a new run with status ``running``."""

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

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord | None:
        """The run, or ``None``."""

    @abstractmethod
    def add_event(self, event: Event) -> None:
        """Append an event to its run's log."""

    @abstractmethod
    def get_events(self, run_id: str) -> list[Event]:
        """The run's events in the order they were added."""

    def claim_paused(self, run_id: str) -> bool:
        """Atomically move a paused run to ``running``; ``False`` if it was not paused.

        Stops two processes from resuming the same pause (which could repeat a tool call).
        The default is not atomic; stores shared between processes override it.
        """
        record = self.get_run(run_id)
        if record is None or record.status != "paused":
            return False
        self.update_run(run_id, "running", record.output, record.output_json, record.state)
        return True

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        """The most recently updated runs (stores may override; default: none)."""
        return []

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Make buffered writes durable (no-op for stores that write through)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
