"""Totals of run metrics (composite runners and nested runs add their parts up)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deskwork.utils import is_number

__all__ = ["sum_metrics"]


def sum_metrics(*metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Add metrics dicts key by key.

    Numeric values (``llm_calls``, token counts, ``cost``, ``tool_calls``, ``latency_ms``, ...)
    are summed; nested dicts (``by_model``) are summed key by key the same way; other values
    (and booleans) are ignored. Float totals are rounded (latency to 3 places, like a single
    run's, others to 9) so sums do not read ``0.1440000002``.
    """
    total: dict[str, Any] = {}
    nested: dict[str, list[Mapping[str, Any]]] = {}
    for entry in metrics:
        for key, value in entry.items():
            if isinstance(value, Mapping):
                nested.setdefault(key, []).append(value)
            elif is_number(value):
                total[key] = total.get(key, 0) + value
    for key, value in total.items():
        if isinstance(value, float):
            total[key] = round(value, 3 if key == "latency_ms" else 9)
    for key, parts in nested.items():
        if key not in total:
            total[key] = sum_metrics(*parts)
    return total
