"""Coordination architectures built on the runtime (each one is a runner the Desk can run).

``deskwork.architecture.blackboard``: a coordinator picks the next contributor each round
around a shared board, and a decider writes the answer.
"""

from __future__ import annotations

from deskwork.architecture.blackboard import (
    DEFAULT_COORDINATOR_INSTRUCTIONS,
    DEFAULT_DECIDER_INSTRUCTIONS,
    Blackboard,
    BlackboardArchitecture,
    BlackboardEntry,
    CoordinatorDecision,
)

__all__ = [
    "DEFAULT_COORDINATOR_INSTRUCTIONS",
    "DEFAULT_DECIDER_INSTRUCTIONS",
    "Blackboard",
    "BlackboardArchitecture",
    "BlackboardEntry",
    "CoordinatorDecision",
]
