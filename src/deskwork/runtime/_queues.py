"""The settings of a durable queue (``desk.queue(...)``, ``deskwork worker --rate ...``).

A queue's settings live in DBOS's queue table in the database, not in one process: every
worker reads them there on each poll, so they hold across all worker processes on all
machines. This module only describes and checks them; ``_durable`` stores them (it imports
DBOS, this module does not).
"""

from __future__ import annotations

from dataclasses import dataclass

from deskwork.store._errors import unstorable_text
from deskwork.utils import is_integer

__all__ = ["GATE_SUFFIX", "INTEGER_MAX", "QueueSettings", "check_queue_name"]

MODEL_RATE_PERIOD_SECONDS = 60.0
"""The rolling window of ``model_requests_per_minute``."""
INTEGER_MAX = 2**31 - 1
"""The largest limit or priority DBOS's queue tables keep (a PostgreSQL ``integer``)."""
GATE_SUFFIX = ":model-requests"
"""The end of the name of the queue that admits a queue's model calls (``_durable.gate_name``):
no queue of runs may be named so."""


@dataclass(frozen=True, slots=True)
class QueueSettings:
    """How runs of one durable queue are admitted, across every worker process."""

    name: str
    """The queue (``desk.submit(..., queue=name)``, ``deskwork worker --queue name``)."""
    concurrency: int | None = None
    """Runs of this queue running at once across all workers (``None``: no limit)."""
    worker_concurrency: int | None = None
    """Runs of this queue running at once in each worker process (``None``: no limit)."""
    model_requests_per_minute: int | None = None
    """Model calls that runs of this queue may start in any rolling minute, counted across
    all workers (``None``: no limit). A call over the limit waits for its turn."""

    def __post_init__(self) -> None:
        check_queue_name(self.name)
        for field in ("concurrency", "worker_concurrency", "model_requests_per_minute"):
            value = getattr(self, field)
            if value is not None and not (is_integer(value) and 1 <= value <= INTEGER_MAX):
                raise ValueError(
                    f"queue {self.name!r}: {field} must be a whole number 1 .. {INTEGER_MAX}"
                    f" (or None), not {value!r}"
                )
        if (
            self.concurrency is not None
            and self.worker_concurrency is not None
            and self.worker_concurrency > self.concurrency
        ):
            raise ValueError(
                f"queue {self.name!r}: worker_concurrency ({self.worker_concurrency}) cannot"
                f" exceed concurrency ({self.concurrency})"
            )


def check_queue_name(name: object) -> str:
    """``name`` if it can name a durable queue: a non-blank text that a database column
    keeps (no NUL character, no lone surrogate), not the name of a queue's admission queue.

    Raises:
        ValueError: anything else (a number, a blank text, such a character).
    """
    if not isinstance(name, str) or not name.strip() or unstorable_text(name):
        raise ValueError(f"a queue needs a non-empty name a database can keep, not {name!r}")
    if name.endswith(GATE_SUFFIX):  # its runs would spend queue ...'s model-call admissions
        raise ValueError(
            f"a queue name cannot end with {GATE_SUFFIX!r}, not {name!r}: that is the queue"
            f" admitting the model calls of queue {name[: -len(GATE_SUFFIX)]!r}"
        )
    return name
