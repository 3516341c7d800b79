"""How graph agents report to the desk run they are part of.

``GraphRunner`` (the desk runner for compiled graphs) installs the run's emitter for the duration of
a run; agents, routing and middleware call :func:`emit_graph_event`, which is a no-op when a graph
runs outside a desk (plain ``graph.ainvoke``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["GraphEmitter", "emit_graph_event", "graph_emitter"]

GraphEmitter = Callable[[str, str, dict[str, Any]], None]
"""``emit(event_type, source, payload)``: the desk run's ``RunConfig.emit``."""

_EMITTER: ContextVar[GraphEmitter | None] = ContextVar("deskwork_graph_emitter", default=None)


def emit_graph_event(event_type: str, source: str, payload: dict[str, Any]) -> None:
    """Record ``event_type`` (e.g. ``graph.agent.completed``) in the current desk run, if any."""
    emit = _EMITTER.get()
    if emit is not None:
        emit(event_type, source, payload)


@contextmanager
def graph_emitter(emit: GraphEmitter) -> Iterator[None]:
    """Send :func:`emit_graph_event` calls made inside this block to ``emit``."""
    token = _EMITTER.set(emit)
    try:
        yield
    finally:
        _EMITTER.reset(token)
