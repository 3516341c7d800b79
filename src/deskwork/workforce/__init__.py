"""Workforce: several workers coordinated in one run.

``Workforce(workers, mode=...)`` runs in ``managed``, ``collaborate``, ``swarm`` or
``blackboard`` mode through a :class:`~deskwork.Desk` like any runner. ``default_reducer``
combines collaborate reports; ``sum_metrics`` totals member metrics.
"""

from __future__ import annotations

from deskwork.workforce._collaborate import MemberReport, default_reducer
from deskwork.workforce._members import sum_metrics
from deskwork.workforce._workforce import Reducer, Workforce

__all__ = ["MemberReport", "Reducer", "Workforce", "default_reducer", "sum_metrics"]
