"""DynamicAgent refuses what it cannot run on, naming it.

Before, a blank ``text`` loaded and the agent ran on an empty prompt (the docs promise it
never does), ``DynamicAgent(config, output_format="v2_raw")`` raised ``AttributeError: 'str'
object has no attribute 'prompt'``, and an ``agent.llm`` without an async ``generate_json``
failed each turn with "'object' object has no attribute 'generate_json'" or "object dict
can't be used in 'await' expression".
"""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import dynamic_config, make_context

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import AgentConfigurationError, AgentEngine, DynamicAgent, InsightType
from deskwork.realtime.library import OutputFormat, get_output_format, register_output_format
from deskwork.realtime.library.output_formats import output_format_names
from deskwork.testing import ScriptedAdapter


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("field", "value"), [("text", ""), ("text", " \n\t"), ("name", "  ")])
def test_a_blank_name_or_text_is_refused(field: str, value: str, strict: bool) -> None:
    with pytest.raises(AgentConfigurationError, match=f"{field}: .*must not be empty"):
        DynamicAgent(dynamic_config(**{field: value}), strict=strict)


def test_output_format_given_by_name_says_where_names_go() -> None:
    with pytest.raises(AgentConfigurationError, match=r"config\[\"output_format\"\]"):
        DynamicAgent(dynamic_config(), output_format="v2_raw")  # type: ignore[arg-type]
    assert DynamicAgent(dynamic_config(output_format="v2_raw")).output_format.name == "v2_raw"


class NoMethod:
    pass


class SyncLLM:
    def generate_json(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"has_insight": True, "content": "sync"}


class AsyncLLM:
    async def generate_json(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"has_insight": True, "content": "async"}


@pytest.mark.parametrize(("llm", "says"), [(NoMethod(), "has no generate_json")])
async def test_an_llm_without_generate_json_fails_the_agent_by_name(llm: Any, says: str) -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = DynamicAgent(dynamic_config())
    engine.register_agent(agent)
    agent.llm = llm
    response = await engine.process_turn(make_context())
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert f"agent 'coach': agent.llm ({type(llm).__name__}) {says}" in insight.content
    assert "async def generate_json" in insight.content


@pytest.mark.parametrize("llm", [AsyncLLM(), SyncLLM()], ids=["async", "sync"])
async def test_a_fake_llm_answers_async_or_sync(llm: Any) -> None:
    """A sync client's answer was thrown away after its (maybe paid) call, failing the turn."""
    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = DynamicAgent(dynamic_config())
    engine.register_agent(agent)
    agent.llm = llm
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == [type(llm).__name__[:-3].lower()]


@pytest.mark.parametrize(
    ("output_format", "message"),
    [
        (None, "needs an OutputFormat.* got NoneType"),
        ({"name": "x", "json_schema": {}}, "needs an OutputFormat.* got dict"),
        (OutputFormat(name=" ", json_schema={}), "name that is not blank"),
    ],
)
def test_register_output_format_refuses_what_it_cannot_register(
    output_format: Any, message: str
) -> None:
    """Before: AttributeError ('NoneType' object has no attribute 'name'), or a format
    registered under a blank name, listed as '' among the known formats."""
    with pytest.raises(ConfigurationError, match=message):
        register_output_format(output_format)
    assert " " not in output_format_names()


def test_get_output_format_of_a_name_that_is_not_a_string_is_unknown() -> None:
    with pytest.raises(ConfigurationError, match="unknown output_format"):
        get_output_format([])  # type: ignore[arg-type]  # was: TypeError unhashable type
