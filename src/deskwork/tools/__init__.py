"""Tools: ``@tool``, ``Tool``, ``ToolResult``, ``Toolbelt``, execution, handoff, subworkers, MCP.

``MCPToolProvider`` and the subworker tools are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.tools.base import Tool, ToolPostHook, ToolPreHook, ToolResult, tool
    from deskwork.tools.execution import aexecute_tool, execute_tool
    from deskwork.tools.handoff import transfer_to_agent_tool
    from deskwork.tools.mcp import MCPToolProvider
    from deskwork.tools.subworkers import create_subworker_tool, create_swarm_tool
    from deskwork.tools.toolbelt import Toolbelt, Toolkit

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
    "Tool": "deskwork.tools.base",
    "ToolPostHook": "deskwork.tools.base",
    "ToolPreHook": "deskwork.tools.base",
    "ToolResult": "deskwork.tools.base",
    "Toolbelt": "deskwork.tools.toolbelt",
    "Toolkit": "deskwork.tools.toolbelt",
    "aexecute_tool": "deskwork.tools.execution",
    "create_subworker_tool": "deskwork.tools.subworkers",
    "create_swarm_tool": "deskwork.tools.subworkers",
    "execute_tool": "deskwork.tools.execution",
    "tool": "deskwork.tools.base",
    "transfer_to_agent_tool": "deskwork.tools.handoff",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
