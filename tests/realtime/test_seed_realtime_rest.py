"""The realtime product document's samples no other test runs: the data-model and config
defaults of its API reference, and its agent-communication and private-memory examples."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.realtime import (
    AgentConfigurationError,
    AgentContext,
    AgentEngine,
    AgentInsight,
    AgentResponse,
    Blackboard,
    Event,
    Fact,
    InsightType,
    TranscriptSegment,
    TriggerType,
)
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter


class FakeLLM:
    """Answers ``generate_json`` with one fixed reply and records the messages."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.calls: list[list[dict[str, Any]]] = []

    async def generate_json(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append(messages)
        return self.reply


def agent(config: dict[str, Any], reply: dict[str, Any]) -> tuple[DynamicAgent, FakeLLM]:
    dynamic = DynamicAgent({"text": "You watch the call.", **config})
    dynamic.llm = fake = FakeLLM(reply)
    return dynamic, fake


def context(board: Blackboard, **fields: Any) -> AgentContext:
    segment = TranscriptSegment(speaker="CUSTOMER", text="What is pricing?", timestamp=1.0)
    return AgentContext(session_id="s1", recent_segments=[segment], blackboard=board, **fields)


def test_api_reference_defaults() -> None:
    insight = AgentInsight(agent_id="a", agent_name="A", type=InsightType.WARNING, content="c")
    assert (insight.confidence, insight.expiry, insight.action_label, insight.metadata) == (
        1.0,
        15,
        None,
        {},
    )
    event = Event(name="question_detected", source_agent="a", timestamp=1.0)
    assert (event.payload, event.id) == ({}, None)
    fact = Fact(type="budget", value="$50,000", source_agent="a", timestamp=1.0)
    assert (fact.key, fact.confidence) == (None, 1.0)
    ctx = AgentContext(session_id="s", recent_segments=[])
    assert (ctx.shared_state, ctx.blackboard, ctx.trigger_type, ctx.trigger_metadata) == (
        {},
        None,
        TriggerType.TURN_BASED,
        {},
    )
    assert (ctx.rag_docs, ctx.user_context, ctx.language_directive) == ([], None, None)
    assert (ctx.turn_count, ctx.phase) == (0, 1)
    response = AgentResponse()
    assert response.insights == [] and response.events == [] and response.facts == []
    assert response.variable_updates == response.queue_pushes == response.memory_updates == {}
    assert response.state_updates == response.data == response.debug_info == {}
    assert [t.value for t in InsightType] == [
        "suggestion",
        "warning",
        "opportunity",
        "fact",
        "praise",
        "error",
    ]
    assert [t.name for t in TriggerType] == [
        "TURN_BASED",
        "KEYWORD",
        "SILENCE",
        "INTERVAL",
        "EVENT",
        "FORCE",
    ]


def test_configuration_field_defaults() -> None:
    settings = DynamicAgent({"name": "Sales Coach", "text": "hi"}).settings
    trigger = settings.trigger_config
    assert settings.id is None  # the agent's id is generated from the name
    assert DynamicAgent({"name": "Sales Coach", "text": "hi"}).config.id
    assert (trigger.mode, trigger.cooldown, trigger.keywords) == ([TriggerType.TURN_BASED], 15, [])
    assert (trigger.silence_threshold, trigger.subscribed_events) == (None, [])
    assert (settings.trigger_conditions, settings.priority) == (None, 0)
    assert (settings.llm.model, settings.llm.context_turns) == ("gpt-4o-mini", 6)
    assert (settings.output_format, settings.include_context) == ("default", True)
    assert AgentEngine(adapter=ScriptedAdapter()).max_phases == 2


@pytest.mark.parametrize(
    ("config", "missing"), [({"text": "hi"}, "name"), ({"name": "Coach"}, "text")]
)
def test_name_and_text_are_required(config: dict[str, object], missing: str) -> None:
    with pytest.raises(AgentConfigurationError, match=f"{missing}: Field required"):
        DynamicAgent(config)


async def test_agent_communication_example_emitter_then_subscriber() -> None:
    emitted = {
        "name": "question_detected",
        "payload": {"question": "What is pricing?", "speaker": "CUSTOMER"},
    }
    emitter, _ = agent(
        {"id": "emitter", "name": "Emitter"}, {"has_insight": False, "events": [emitted]}
    )
    subscriber, heard = agent(
        {
            "id": "answerer",
            "name": "Answerer",
            "trigger_config": {"mode": "event", "subscribed_events": ["question_detected"]},
        },
        {"has_insight": True, "content": "Answer with the value story."},
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(emitter)
    engine.register_agent(subscriber)
    board = Blackboard()

    response = await engine.process_turn(context(board))

    assert [(i.agent_id, i.content) for i in response.insights] == [
        ("answerer", "Answer with the value story.")
    ]
    assert [(e.name, e.payload, e.source_agent) for e in response.events] == [
        ("question_detected", emitted["payload"], "emitter")
    ]
    assert len(heard.calls) == 1
    assert board.events == []  # events are cleared after the turn


async def test_private_memory_and_v1_state_in_templates() -> None:
    text = (
        "count={{ blackboard.memory[agent_id].objection_count }}"
        " phase={{ blackboard.variables.phase }} legacy={{ state.phase }}"
    )
    tracker, fake = agent(
        {"id": "tracker", "name": "Tracker", "text": text, "trigger_config": {"cooldown": 0}},
        {
            "has_insight": False,
            "memory_updates": {"last_objection": "price", "objection_count": 4},
        },
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(tracker)
    board = Blackboard()
    board.set_var("phase", "negotiation")

    await engine.process_turn(context(board))
    assert board.get_memory("tracker") == {"last_objection": "price", "objection_count": 4}
    await engine.process_turn(context(board))

    system = str(fake.calls[-1][0]["content"])
    assert "count=4 phase=negotiation legacy=negotiation" in system
