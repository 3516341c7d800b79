"""The hook through which a durable run makes every tool call a checkpointed step.

``aexecute_tool`` hands the whole call (hooks, validation, timeout, retries) to the hook set
here, when one is set for the current context; the durable desk sets it for its runs, so the
runners and the tool code stay unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deskwork.core.tool_call import ToolCall, ToolResult
    from deskwork.tools.base import Tool

__all__ = ["ToolStepHook", "tool_step_hook"]

ToolStepHook = Callable[
    ["Tool", "ToolCall", Callable[[], Awaitable["ToolResult"]]], Awaitable["ToolResult"]
]
"""``hook(tool, call, run)``: returns ``await run()``, or its checkpointed result."""

tool_step_hook: ContextVar[ToolStepHook | None] = ContextVar(
    "deskwork_tool_step_hook", default=None
)
