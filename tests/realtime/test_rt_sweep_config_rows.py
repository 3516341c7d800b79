"""Agent configs read from a database row: an integer primary key as ``id`` and keywords
that are not all strings are loaded (lenient), not refused as if the agent could not work."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from rt_support import dynamic_config, make_context

from deskwork.realtime import AgentEngine, TriggerType
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter

LOGGER = "deskwork.realtime.config"


def _fields(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.config_problem["field"] for r in caplog.records if hasattr(r, "config_problem")]


async def test_an_integer_id_from_a_database_is_the_agents_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(dynamic_config(id=42))
    assert agent.config.id == "42" and _fields(caplog) == []
    engine = AgentEngine(adapter=ScriptedAdapter(default='{"has_insight": false}'))
    engine.register_agent(agent)
    response = await engine.process_turn(make_context(), allowed_agent_ids=["42"])
    assert response.debug_info["phases"][0]["agents_run"] == ["42"]


def test_an_id_that_is_no_key_is_derived_from_the_name(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(dynamic_config("Price Watch", id=["pw"]))
    assert agent.config.id == "price_watch" and _fields(caplog) == ["id"]


@pytest.mark.parametrize(
    ("keywords", "kept", "problems"),
    [
        ([2024, "price"], ["2024", "price"], []),  # a number is its text
        (["price", None, {"w": 1}], ["price"], ["trigger_config.keywords"]),
        ({"price": 1}, [], ["trigger_config.keywords"]),
        (7, [], ["trigger_config.keywords"]),
    ],
)
def test_keywords_that_are_not_strings_are_repaired(
    keywords: Any, kept: list[str], problems: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    trigger = {"mode": "keyword", "cooldown": 0, "keywords": keywords}
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        agent = DynamicAgent(dynamic_config(trigger_config=trigger))
    assert agent.config.trigger_types == [TriggerType.KEYWORD]
    assert agent.config.trigger_keywords == kept
    assert _fields(caplog) == problems
