"""``transfer_to_agent_tool``: an allowlist that is not a list of names fails when it is made."""

from __future__ import annotations

import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.tools import transfer_to_agent_tool


def test_one_name_given_as_a_string_is_refused() -> None:
    # list("Writer") allowed the agents "W", "r", "i", ...: every handoff to Writer was rejected
    with pytest.raises(ConfigurationError, match="must be a list of names, not 'Writer'"):
        transfer_to_agent_tool("Writer")


@pytest.mark.parametrize("entry", [None, 3, ""])
def test_an_entry_that_is_not_a_name_is_refused(entry: object) -> None:
    with pytest.raises(ConfigurationError, match="not an agent's name"):
        transfer_to_agent_tool(["Writer", entry])  # type: ignore[list-item]


def test_a_list_of_names_is_the_allowlist() -> None:
    handoff = transfer_to_agent_tool(("Writer", "Editor"))
    assert handoff.schema["properties"]["agent_name"]["enum"] == ["Writer", "Editor"]
    assert handoff.metadata["available_agents"] == ["Writer", "Editor"]
