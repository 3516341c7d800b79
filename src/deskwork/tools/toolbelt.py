"""Toolbelt: a named collection of tools."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from typing import Any

from deskwork.tools.base import Tool

__all__ = ["Toolbelt", "Toolkit"]


class Toolbelt:
    """Registers tools by name; a later tool with the same name replaces the earlier one."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, tool: Tool) -> None:
        """Add ``tool`` (replacing one with the same name)."""
        if not isinstance(tool, Tool):
            raise TypeError(f"expected a Tool, got {type(tool).__name__}; decorate it with @tool")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Remove a tool by name; unknown names are ignored."""
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def list(self) -> list[Tool]:
        """All tools, in registration order."""
        return list(self._tools.values())

    def names(self) -> builtins.list[str]:
        """All tool names."""
        return list(self._tools)

    def schemas(self) -> builtins.list[dict[str, Any]]:
        """Provider tool descriptions for every tool."""
        return [t.to_provider() for t in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


Toolkit = Toolbelt
