"""Loop decisions: what a worker does after each model turn (a closed union)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deskwork.core.pending import PendingAction

__all__ = ["Failure", "FinalOutput", "Interruption", "NextStep", "RunAgain"]


@dataclass(slots=True, frozen=True)
class RunAgain:
    """Take another model turn (tool results were appended)."""


@dataclass(slots=True, frozen=True)
class FinalOutput:
    """The worker is done."""

    content: str | None
    data: Any = None
    reasoning: str | None = None


@dataclass(slots=True, frozen=True)
class Interruption:
    """Pause for a person (or an orchestrator) to answer ``action``."""

    action: PendingAction


@dataclass(slots=True, frozen=True)
class Failure:
    """Stop with a failed report."""

    error: str
    details: dict[str, Any] = field(default_factory=dict)


NextStep = RunAgain | FinalOutput | Interruption | Failure
