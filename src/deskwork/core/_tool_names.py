"""The one rule for the names of tools (and of a structured output's schema) sent to a model.

OpenAI and Anthropic accept 1 to 64 letters, digits, ``_`` or ``-`` (``^[a-zA-Z0-9_-]{1,64}$``):
:func:`is_tool_name` tests a name against it, :func:`as_tool_name` turns any text into one.
"""

from __future__ import annotations

import re
from typing import TypeGuard

__all__ = ["MAX_TOOL_NAME", "as_tool_name", "is_tool_name"]

MAX_TOOL_NAME = 64
"""The longest name the providers accept."""
_CHARS = "A-Za-z0-9_-"
_TOOL_NAME = re.compile(rf"[{_CHARS}]{{1,{MAX_TOOL_NAME}}}")
_NOT_IN_NAME = re.compile(rf"[^{_CHARS}]")


def is_tool_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a text every provider accepts as a tool's name."""
    return isinstance(name, str) and _TOOL_NAME.fullmatch(name) is not None


def as_tool_name(text: str, default: str) -> str:
    """``text`` as a name every provider accepts: each other character as ``_``, cut to
    :data:`MAX_TOOL_NAME` characters; ``default`` for an empty text."""
    return _NOT_IN_NAME.sub("_", text)[:MAX_TOOL_NAME] or default
