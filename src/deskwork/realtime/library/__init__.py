"""Ready-made agents: ``DynamicAgent`` (configured from a dict) and its output formats."""

from __future__ import annotations

from deskwork.realtime.library.dynamic import DynamicAgent
from deskwork.realtime.library.output_formats import (
    AgentOutputError,
    OutputFormat,
    OutputMapping,
    get_output_format,
    register_output_format,
)

__all__ = [
    "AgentOutputError",
    "DynamicAgent",
    "OutputFormat",
    "OutputMapping",
    "get_output_format",
    "register_output_format",
]
