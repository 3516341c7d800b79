"""AgentEngine refuses bad arguments where they are given, naming them.

Before, a wrong value was kept and failed far from its cause: ``max_phases=2.5`` made every
turn raise ``TypeError`` in ``range()``, ``agent_timeout=-1`` failed every agent with "timed
out after -1s", a non-callable ``clock`` broke at the first cooldown check, a callback object
without hooks logged eight warnings per turn, and ``register_agent(None)`` raised
``AttributeError: 'NoneType' object has no attribute 'config'``.
"""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import ScriptAgent, dynamic_config, make_context

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import (
    AgentCallbackHandler,
    AgentConfig,
    AgentConfigurationError,
    AgentContext,
    AgentEngine,
    BaseAgent,
    DynamicAgent,
    TriggerType,
)
from deskwork.testing import ScriptedAdapter


@pytest.mark.parametrize("value", [None, "3", 2.5, float("nan"), True])
def test_max_phases_that_is_not_an_integer_is_refused(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="max_phases must be an integer"):
        AgentEngine(adapter=ScriptedAdapter(), max_phases=value)


@pytest.mark.parametrize("value", [-1, 0, float("nan"), float("inf"), "5", True])
def test_agent_timeout_must_be_a_positive_number_or_none(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="agent_timeout must be a number"):
        AgentEngine(adapter=ScriptedAdapter(), agent_timeout=value)


async def test_agent_timeout_none_and_numbers_still_work() -> None:
    for value in (None, 5, 0.5):
        engine = AgentEngine(adapter=ScriptedAdapter(), agent_timeout=value)
        assert engine.agent_timeout == value
        engine.register_agent(ScriptAgent("a"))
        assert (await engine.process_turn(make_context())).insights == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"adapter": "openai/gpt-4o-mini"},
            "adapter must be an instance of BaseModelAdapter, got str",
        ),
        ({"event_bus": "bus"}, "event_bus must be an instance of EventBus, got str"),
        ({"desk": "desk"}, "desk must be an instance of Desk, got str"),
    ],
)
def test_adapter_event_bus_and_desk_must_be_what_they_say(
    kwargs: dict[str, Any], message: str
) -> None:
    """Before: desk='desk' gave the engine no event bus (every event silently lost), a
    wrong event_bus failed every turn and a wrong adapter every LLM agent, later."""
    with pytest.raises(ConfigurationError, match=message):
        AgentEngine(**kwargs)


def test_clock_that_cannot_be_called_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="clock must be a callable"):
        AgentEngine(adapter=ScriptedAdapter(), clock=5.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("callbacks", "message"),
    [
        (AgentCallbackHandler(), "callbacks must be a list"),
        ("tracer", "callbacks must be a list"),
        ([object()], r"callbacks\[0\] \(object\) is not an AgentCallbackHandler: it has none"),
    ],
)
def test_callbacks_must_be_a_list_of_handlers(callbacks: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        AgentEngine(adapter=ScriptedAdapter(), callbacks=callbacks)


class SyncHooks(AgentCallbackHandler):
    def on_turn_end(self, response: object, duration: float) -> None:  # type: ignore[override]
        pass


def test_a_callback_hook_that_is_not_async_is_refused() -> None:
    """Before, it ran and then every call logged "can't be used in 'await' expression"."""
    with pytest.raises(ConfigurationError, match=r"hooks must be async .* not on_turn_end"):
        AgentEngine(adapter=ScriptedAdapter(), callbacks=[SyncHooks()])


class TurnEndsOnly:
    """A duck-typed handler (no AgentCallbackHandler base) written for the older hooks."""

    def __init__(self) -> None:
        self.ends: list[int] = []

    async def on_turn_end(self, response: object, duration: float) -> None:
        self.ends.append(1)


async def test_a_duck_typed_handler_needs_only_the_hooks_it_uses(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, it was refused for lacking every other hook ("it has no on_turn_start, ...,
    on_turn_error"): each hook added to AgentCallbackHandler broke handlers that worked."""
    handler = TurnEndsOnly()
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[handler])
    engine.register_agent(ScriptAgent("coach"))
    await engine.process_turn(make_context())
    assert handler.ends == [1]
    assert "realtime callback" not in caplog.text  # a missing hook is not a failure


def test_callbacks_may_be_any_iterable_of_handlers() -> None:
    handlers = (AgentCallbackHandler(), AgentCallbackHandler())
    assert AgentEngine(adapter=ScriptedAdapter(), callbacks=handlers).callbacks == list(handlers)


@pytest.mark.parametrize(
    ("agent", "shown"), [(None, "NoneType"), ("coach", "str"), (BaseAgent, "the class BaseAgent")]
)
def test_register_agent_refuses_what_is_not_an_agent(agent: Any, shown: str) -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    with pytest.raises(ConfigurationError, match=f"expected a BaseAgent instance .* got {shown}"):
        engine.register_agent(agent)
    assert engine.agents == []


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (None, "expected a list of agents, got NoneType"),
        (ScriptAgent("b"), "expected a list of agents, got ScriptAgent"),
        ([ScriptAgent("b"), None], "expected a BaseAgent instance .* got NoneType"),
    ],
)
def test_replace_agents_refuses_what_is_not_a_list_of_agents(agents: Any, message: str) -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    old = ScriptAgent("a")
    engine.register_agent(old)
    with pytest.raises(ConfigurationError, match=message):
        engine.replace_agents(agents)
    assert engine.agents == [old]  # the previous agents keep serving


# ------------------------------------------------------------------ turn arguments


def engine_with_agents() -> tuple[AgentEngine, ScriptAgent]:
    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = ScriptAgent("a", trigger_keywords=["price"])
    engine.register_agent(agent)
    return engine, agent


@pytest.mark.parametrize("context", [None, {"session_id": "s"}])
async def test_process_turn_needs_an_agent_context(context: Any) -> None:
    engine, _ = engine_with_agents()
    with pytest.raises(TypeError, match="context must be an AgentContext"):
        await engine.process_turn(context)
    with pytest.raises(TypeError, match=r"AgentEngine\.turn: context must be an AgentContext"):
        engine.turn(context)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"allowed_agent_ids": "a"}, TypeError, "allowed_agent_ids must be a list"),
        ({"allowed_agent_ids": 5}, TypeError, "allowed_agent_ids must be a list"),
        ({"allowed_agent_ids": ["a", None]}, TypeError, "must hold agent ids .* NoneType"),
        ({"trigger_metadata": ["keyword"]}, TypeError, "trigger_metadata must be a mapping"),
        ({"trigger_type": "bogus"}, ValueError, "trigger_type must be one of .* 'bogus'"),
        ({"trigger_type": None}, ValueError, "trigger_type must be one of .* None"),
    ],
)
async def test_turn_arguments_are_checked_before_the_turn_starts(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    engine, agent = engine_with_agents()
    context = make_context()
    with pytest.raises(error, match=message):
        await engine.process_turn(context, **kwargs)
    with pytest.raises(error, match=message):
        engine.turn(context, **kwargs)
    assert agent.calls == []
    assert context.blackboard is not None and context.blackboard.variables == {}


async def test_an_allow_list_given_as_one_string_no_longer_silences_every_agent() -> None:
    engine, agent = engine_with_agents()
    await engine.process_turn(make_context(), allowed_agent_ids=["a"])
    assert len(agent.calls) == 1
    with pytest.raises(TypeError):
        await engine.process_turn(make_context(), allowed_agent_ids="a")


def test_check_keyword_triggers_refuses_a_text_or_allow_list_of_the_wrong_type() -> None:
    engine, agent = engine_with_agents()
    assert engine.check_keyword_triggers("the PRICE is high", ["a"]) == [(agent, "price")]
    with pytest.raises(TypeError, match="text must be a string, got NoneType"):
        engine.check_keyword_triggers(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="allowed_agent_ids must be a list"):
        engine.check_keyword_triggers("price", "a")  # substring match of the id before


@pytest.mark.parametrize("config", [{"name": "coach"}, None])
def test_a_custom_agent_needs_an_agent_config(config: Any) -> None:
    class Custom(BaseAgent):
        async def evaluate(self, context: AgentContext) -> None:
            return None

    with pytest.raises(AgentConfigurationError, match="Custom: config must be an AgentConfig"):
        Custom(config)


@pytest.mark.parametrize("agent_id", ["coach\x00", "coach\ud800"])
def test_an_agent_id_no_store_can_keep_is_refused(agent_id: str) -> None:
    """Before, it was accepted, and every desk run of the engine failed mid-turn with a
    StoreError when the agent's first event (source = its id) was stored."""
    with pytest.raises(AgentConfigurationError, match=r"id: .*NUL character or a lone surrogate"):
        AgentConfig(name="Coach", id=agent_id)
    with pytest.raises(AgentConfigurationError, match="NUL character or a lone surrogate"):
        DynamicAgent(dynamic_config(id=agent_id))


@pytest.mark.parametrize("temperature", [float("nan"), float("inf"), -0.5])
def test_a_temperature_no_provider_takes_is_refused_when_built(temperature: float) -> None:
    """Before, it was accepted and sent with every model call: each turn failed the agent
    with the provider's error instead."""
    with pytest.raises(AgentConfigurationError, match="temperature"):
        AgentConfig(name="Coach", temperature=temperature)
    assert AgentConfig(name="Coach", temperature=0).temperature == 0
    lenient = AgentConfig(name="Coach", temperature=temperature, strict=False)
    assert lenient.temperature is None and [p.field for p in lenient.problems] == ["temperature"]


def test_api_key_must_be_a_string_or_none() -> None:
    """Before, AgentEngine(api_key=123) or update_api_key(123) was kept and only the first
    LLM call failed, in every agent; the message does not show the value."""
    with pytest.raises(ConfigurationError, match="api_key must be a string or None, got int"):
        AgentEngine(api_key=123)  # type: ignore[arg-type]
    engine = AgentEngine(api_key="sk-test")
    with pytest.raises(ConfigurationError, match=r"update_api_key: api_key must be a string"):
        engine.update_api_key(["sk-test"])  # type: ignore[arg-type]
    engine.update_api_key(None)


def test_get_event_subscribers_refuses_one_string() -> None:
    """Before, 'question' was read as its letters, so agents subscribed to 'q', 'u' ...
    were returned and those subscribed to 'question' were not."""
    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = ScriptAgent("a", trigger_types=[TriggerType.EVENT], subscribed_events=["question"])
    engine.register_agent(agent)
    assert engine.get_event_subscribers(["question"]) == [agent]
    with pytest.raises(TypeError, match="event_names must be a list of event names, got str"):
        engine.get_event_subscribers("question")
    with pytest.raises(TypeError, match="got NoneType"):
        engine.get_event_subscribers(None)  # type: ignore[arg-type]
