"""The ReAct engine: a multi-pass thought/action/observation loop over knowledge modules."""

from __future__ import annotations

from deskwork.graph.react.executor import ReactExecutor
from deskwork.graph.react.models import (
    ActionHandler,
    ReactParsedResponse,
    ReactStructuredResponse,
    TerminalActionResult,
)

__all__ = [
    "ActionHandler",
    "ReactExecutor",
    "ReactParsedResponse",
    "ReactStructuredResponse",
    "TerminalActionResult",
]
