"""One rule for the names sent to a model as a tool's or a response schema's: what
``as_tool_name`` makes of any text is a name ``@tool`` accepts, and nothing else is."""

from __future__ import annotations

import pytest

from deskwork.core._tool_names import as_tool_name, is_tool_name
from deskwork.exceptions import ConfigurationError
from deskwork.tools.base import tool


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("search", "search"),
        ("fs.read file", "fs_read_file"),
        ("Answer[int]", "Answer_int_"),
        ("ü" * 70, "_" * 64),
        ("", "fallback"),
    ],
)
def test_any_text_becomes_a_name_a_tool_may_have(text: str, name: str) -> None:
    assert as_tool_name(text, "fallback") == name
    assert is_tool_name(name)
    assert tool(name=name)(lambda: None).name == name


@pytest.mark.parametrize("bad", ["", "a" * 65, "fs.read", "two words", 5])
def test_a_name_outside_the_rule_is_refused(bad: object) -> None:
    assert not is_tool_name(bad)
    with pytest.raises(ConfigurationError, match="invalid tool name"):
        tool(name=bad)(lambda: None)  # type: ignore[arg-type]
