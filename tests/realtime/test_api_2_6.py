"""2.6 parity: top-level exports, AgentConfig defaults, per-session overrides, the LLM seam."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rt_support import FakeClock, ScriptAgent, dynamic_config, make_context, reply_json

import deskwork.realtime as realtime
from deskwork.exceptions import ConfigurationError
from deskwork.realtime import (
    DEFAULT_MODEL,
    AgentConfig,
    AgentConfigOverride,
    AgentConfigurationError,
    AgentEngine,
    InsightType,
)
from deskwork.realtime.core.llm import LLMClient
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter, fail, reply

# ----------------------------------------------------------------- exports


def test_quick_start_names_are_top_level() -> None:
    assert realtime.DynamicAgent is DynamicAgent
    assert DEFAULT_MODEL == "gpt-4o-mini"
    assert issubclass(AgentConfigurationError, ConfigurationError)
    assert AgentConfig(name="a").model == DEFAULT_MODEL
    assert DynamicAgent(dynamic_config()).config.model == DEFAULT_MODEL
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = realtime.Nope


# ------------------------------------------------------------ AgentConfig


def test_subscribed_events_none_is_the_documented_default() -> None:
    config = AgentConfig(name="a", subscribed_events=None, trigger_keywords=None)
    assert config.subscribed_events == []
    assert config.trigger_keywords == []


def test_trigger_conditions_round_trip_as_given() -> None:
    given = {"rules": [{"var": "phase", "op": "in", "value": ["a", "b"]}]}  # no "mode"
    config = AgentConfig(name="a", trigger_conditions=given)
    assert config.trigger_conditions == given
    assert config.model_dump()["trigger_conditions"] == given
    assert config.conditions is not None and config.conditions.mode == "all"
    agent = DynamicAgent(dynamic_config(trigger_conditions=given))
    assert agent.config.trigger_conditions == given


def test_invalid_assignment_raises_agent_configuration_error() -> None:
    config = AgentConfig(name="a")
    with pytest.raises(AgentConfigurationError, match="cooldown"):
        config.cooldown = -1


# ------------------------------------------------------ AgentConfigOverride


async def test_cooldown_modifier_applies_to_its_session_only() -> None:
    clock = FakeClock()
    agent = ScriptAgent("coach", cooldown=10)
    engine = AgentEngine(adapter=ScriptedAdapter(), clock=clock)
    engine.register_agent(agent)
    slower = {"coach": AgentConfigOverride(cooldown_modifier=20)}

    async def turn(session: str, **fields: Any) -> None:
        await engine.process_turn(make_context(session_id=session, **fields))

    await turn("plain")
    await turn("slow", agent_config_overrides=slower)
    clock.advance(15)  # past the base cooldown (10), not the overridden one (30)
    await turn("plain")
    await turn("slow", agent_config_overrides=slower)
    assert [c.session_id for c in agent.calls] == ["plain", "slow", "plain"]
    clock.advance(20)
    await turn("slow", agent_config_overrides=slower)
    assert [c.session_id for c in agent.calls][-1] == "slow"


def test_cooldown_modifier_has_a_floor() -> None:
    faster = AgentConfigOverride(cooldown_modifier=-100)
    assert faster.cooldown(30) == 5  # never below 5 s ...
    assert faster.cooldown(2) == 2  # ... unless the base is already shorter
    assert AgentConfigOverride().cooldown(30) == 30


async def test_context_turns_and_instructions_from_the_override() -> None:
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(
        DynamicAgent(dynamic_config(model_config={"context_turns": 1}, id="coach"))
    )
    segments = [("A", "first"), ("B", "second"), ("A", "third")]
    override = AgentConfigOverride(context_turns_modifier=1, instructions_append="Be brief.")
    context = make_context(segments=segments, agent_config_overrides={"coach": override})
    await engine.process_turn(context)
    system, user = (m["content"] for m in adapter.calls[0]["messages"])
    assert "## Session instructions\nBe brief." in system
    assert "second" in user and "third" in user and "first" not in user
    everything = AgentConfigOverride(context_turns_modifier=-5)  # <= 0: the whole transcript
    await engine.process_turn(
        make_context(segments=segments, agent_config_overrides={"coach": everything})
    )
    assert "first" in adapter.calls[1]["messages"][1]["content"]
    assert "Session instructions" not in adapter.calls[1]["messages"][0]["content"]


def test_override_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="cooldown_modifer"):
        AgentConfigOverride.model_validate({"cooldown_modifer": 5})


# --------------------------------------------------------------- LLM seam


class FakeLLM:
    """The 2.6 guide's test double: only ``generate_json``."""

    def __init__(self, reply: dict[str, Any] | None) -> None:
        self.reply = reply
        self.calls: list[tuple[str, list[dict[str, Any]]]] = []

    async def generate_json(
        self, model: str, messages: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        self.calls.append((model, messages))
        return self.reply


@pytest.mark.parametrize("assign_before_registration", [True, False])
async def test_a_fake_llm_on_the_agent_is_honoured(assign_before_registration: bool) -> None:
    adapter = ScriptedAdapter()  # no turns: a real call would fail the agent
    engine = AgentEngine(adapter=adapter)
    agent = DynamicAgent(dynamic_config())
    fake = FakeLLM({"has_insight": True, "content": "Ask about the budget."})
    if assign_before_registration:
        agent.llm = fake
    engine.register_agent(agent)
    if not assign_before_registration:
        assert isinstance(agent.llm, LLMClient)
        agent.llm = fake
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == ["Ask about the budget."]
    assert adapter.calls == []
    [(model, messages)] = fake.calls
    assert model == DEFAULT_MODEL
    assert messages[0]["role"] == "system"


async def test_a_fake_returning_none_is_an_error_insight() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = DynamicAgent(dynamic_config())
    agent.llm = FakeLLM(None)
    engine.register_agent(agent)
    response = await engine.process_turn(make_context())
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert "no usable JSON" in insight.content


async def test_configured_call_settings_reach_the_fake_and_the_adapter() -> None:
    config = dynamic_config(
        model_config={
            "model": "openai/gpt-5-nano",
            "reasoning_effort": "minimal",
            "max_tokens": 300,
            "temperature": 0.2,
        }
    )
    seen: dict[str, Any] = {}

    class KwargsLLM:
        async def generate_json(self, model: str, messages: Any, **kwargs: Any) -> Any:
            seen.update(kwargs, model=model)
            return {"has_insight": False}

    agent = DynamicAgent(config)
    agent.llm = KwargsLLM()
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(agent)
    await engine.process_turn(make_context())
    assert seen == {
        "model": "openai/gpt-5-nano",
        "reasoning_effort": "minimal",
        "max_tokens": 300,
        "extra_params": {"temperature": 0.2},
    }
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    real = AgentEngine(adapter=adapter)
    real.register_agent(DynamicAgent(config))
    await real.process_turn(make_context())
    call = adapter.calls[0]
    assert (call["reasoning_effort"], call["max_tokens"], call["temperature"]) == (
        "minimal",
        300,
        0.2,
    )


async def test_llm_client_generate_json_reads_fenced_json_and_reports_failures() -> None:
    adapter = ScriptedAdapter(
        [reply('```json\n{"a": 1}\n```'), reply("not json"), fail(ConnectionError("down"))]
    )
    client = LLMClient(adapter)
    assert await client.generate_json("m", [{"role": "user", "content": "x"}]) == {"a": 1}
    assert client.last_error is None
    assert await client.generate_json("m", []) is None
    assert "not valid JSON" in str(client.last_error)
    assert await client.generate_json("m", []) is None
    assert isinstance(client.last_error, ConnectionError)
    assert adapter.calls[0]["response_format"] == {"type": "json_object"}


async def test_llm_client_timeout_is_a_failure_not_a_hang() -> None:
    client = LLMClient(ScriptedAdapter([reply("{}", latency=60)]), timeout=0.05)
    started = asyncio.get_running_loop().time()
    assert await client.generate_json("m", []) is None
    assert asyncio.get_running_loop().time() - started < 20  # not the reply's 60 s
    assert isinstance(client.last_error, TimeoutError)
    assert "timed out after 0.05s" in str(client.last_error)


async def test_model_failure_details_reach_the_error_insight() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter([fail(ConnectionError("provider down"))]))
    engine.register_agent(DynamicAgent(dynamic_config()))
    response = await engine.process_turn(make_context())
    assert "ConnectionError: provider down" in response.insights[0].content


def test_an_agent_moved_to_another_engine_uses_that_engines_client() -> None:
    first, second = AgentEngine(adapter=ScriptedAdapter()), AgentEngine(adapter=ScriptedAdapter())
    agent = DynamicAgent(dynamic_config())
    first.register_agent(agent)
    assert agent.llm is first.llm_client
    first.unregister_agent(agent.config.id)
    second.register_agent(agent)
    assert agent.llm is second.llm_client
    own = DynamicAgent(dynamic_config(), adapter=ScriptedAdapter())
    second.register_agent(DynamicAgent(dynamic_config("Other")))
    first.register_agent(own)
    assert isinstance(own.llm, LLMClient) and own.llm is not first.llm_client
