"""Tools: ``@tool``, ``Tool``, ``ToolResult``, ``Toolbelt``, execution, handoff, subworkers, MCP.

``MCPToolProvider`` and the subworker tools are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.tools.base import Tool, ToolPostHook, ToolPreHook, ToolResult, tool
from deskwork.tools.execution import aexecute_tool, execute_tool
from deskwork.tools.handoff import transfer_to_agent_tool
from deskwork.tools.toolbelt import Toolbelt, Toolkit

if TYPE_CHECKING:
    from deskwork.tools.mcp import MCPToolProvider
    from deskwork.tools.subworkers import create_subworker_tool, create_swarm_tool

__all__ = [
    "MCPToolProvider",
    "Tool",
    "ToolPostHook",
    "ToolPreHook",
    "ToolResult",
    "Toolbelt",
    "Toolkit",
    "aexecute_tool",
    "create_subworker_tool",
    "create_swarm_tool",
    "execute_tool",
    "tool",
    "transfer_to_agent_tool",
]

_LAZY = {
    "MCPToolProvider": "deskwork.tools.mcp",
    "create_subworker_tool": "deskwork.tools.subworkers",
    "create_swarm_tool": "deskwork.tools.subworkers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deskwork.tools' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
