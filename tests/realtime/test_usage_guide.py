"""The seed's Usage Guide and README snippets, run as written (``xubb_agents`` → deskwork.realtime).

The only test double is the model port: ``LiteLLMAdapter`` (which ``AgentEngine(api_key=...)``
creates lazily) is replaced by a factory returning a ``ScriptedAdapter``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

import pytest

import deskwork.adapters.litellm as litellm_module

# The guide's imports, renamed.
from deskwork.realtime import AgentContext, AgentEngine, Blackboard, TriggerType
from deskwork.realtime.core.agent import AgentConfig, BaseAgent
from deskwork.realtime.core.conditions import ConditionEvaluator
from deskwork.realtime.core.models import AgentContext as ModelsAgentContext
from deskwork.realtime.core.models import (
    AgentInsight,
    AgentResponse,
    Event,
    Fact,
    InsightType,
    TranscriptSegment,
)
from deskwork.realtime.core.models import TriggerType as ModelsTriggerType
from deskwork.realtime.library import DynamicAgent
from deskwork.realtime.utils.tracing import StructuredLogTracer
from deskwork.testing import ScriptedAdapter

SALES_COACH = {
    "id": "sales_coach",
    "name": "Sales Coach",
    "trigger_config": {"mode": "turn_based", "cooldown": 10},
    "trigger_conditions": {
        "mode": "all",
        "rules": [{"var": "phase", "op": "in", "value": ["discovery", "negotiation", "closing"]}],
    },
    "priority": 5,
    "model_config": {"model": "gpt-4o", "context_turns": 15},
    "text": "You are a sales coach. Phase: {{ blackboard.variables.phase }}...",
}
PRICE_WATCHER = {
    "id": "price_watcher",
    "name": "Price Watcher",
    "trigger_config": {
        "mode": "keyword",
        "keywords": ["price", "discount", "budget"],
        "cooldown": 5,
    },
    "text": "Handle price objections.",
}


class FakeLiteLLM:
    """Stands in for LiteLLMAdapter: records the api_key, answers from a script."""

    created: ClassVar[list[dict[str, Any]]] = []
    replies: ClassVar[list[str]] = []

    def __new__(cls, **kwargs: Any) -> ScriptedAdapter:  # type: ignore[misc]
        cls.created.append(kwargs)
        return ScriptedAdapter(list(cls.replies), default=json.dumps({"has_insight": False}))


@pytest.fixture(autouse=True)
def fake_litellm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLiteLLM]:
    FakeLiteLLM.created = []
    FakeLiteLLM.replies = []
    monkeypatch.setattr(litellm_module, "LiteLLMAdapter", FakeLiteLLM)
    return FakeLiteLLM


def load_agents_from_db() -> list[dict[str, Any]]:
    return [SALES_COACH, PRICE_WATCHER]


def test_documented_import_paths() -> None:
    assert ModelsAgentContext is AgentContext
    assert ModelsTriggerType is TriggerType
    assert {t.value for t in TriggerType} == {
        "turn_based",
        "keyword",
        "silence",
        "interval",
        "event",
        "force",
    }
    assert {t.value for t in InsightType} == {
        "suggestion",
        "warning",
        "opportunity",
        "fact",
        "praise",
        "error",
    }
    assert (
        AgentInsight(agent_id="a", agent_name="A", type=InsightType.FACT, content="c").expiry == 15
    )
    assert Fact(type="budget", value=1, source_agent="a", timestamp=1.0).key is None
    assert callable(ConditionEvaluator().evaluate)


async def test_usage_in_other_projects(fake_litellm: type[FakeLiteLLM]) -> None:
    fake_litellm.replies = [json.dumps({"has_insight": True, "content": "Ask about budget"})]
    config_dict = {**SALES_COACH, "trigger_conditions": None}

    # Initialize engine
    engine = AgentEngine(api_key="your-openai-key")

    # Load agent from config
    agent = DynamicAgent(config_dict)
    engine.register_agent(agent)

    # Create session with Blackboard
    blackboard = Blackboard()

    # Process conversation
    context = AgentContext(
        session_id="session_123",
        recent_segments=[TranscriptSegment(speaker="CUSTOMER", text="Hi", timestamp=1.0)],
        blackboard=blackboard,
        turn_count=1,
    )
    response = await engine.process_turn(context, trigger_type=TriggerType.TURN_BASED)

    assert [i.content for i in response.insights] == ["Ask about budget"]
    assert fake_litellm.created == [{"api_key": "your-openai-key"}]


async def test_basic_integration_and_keyword_handling(fake_litellm: type[FakeLiteLLM]) -> None:
    fake_litellm.replies = [
        json.dumps({"has_insight": True, "content": "Great discovery question", "type": "praise"}),
        json.dumps(
            {
                "has_insight": True,
                "content": "Price objection. Focus on value.",
                "type": "warning",
                "confidence": 0.9,
            }
        ),
    ]
    sent: list[AgentInsight] = []

    async def send_to_ui(insight: AgentInsight) -> None:
        sent.append(insight)

    # --- Basic Integration (as in the guide) ---
    engine = AgentEngine(api_key="sk-...")

    for config in load_agents_from_db():
        engine.register_agent(DynamicAgent(config))

    session = {
        "id": "session_123",
        "blackboard": Blackboard(),
        "turn_count": 0,
        "segments": [],
    }

    async def on_transcript_segment(segment: dict[str, Any]) -> None:
        """Called when speech is detected."""
        session["segments"].append(TranscriptSegment(**segment))  # type: ignore[attr-defined]
        session["turn_count"] += 1  # type: ignore[operator]

        context = AgentContext(
            session_id=session["id"],  # type: ignore[arg-type]
            recent_segments=session["segments"][-100:],  # type: ignore[index]
            blackboard=session["blackboard"],  # type: ignore[arg-type]
            turn_count=session["turn_count"],  # type: ignore[arg-type]
            user_context="Sales Director at Acme Corp",
        )

        response = await engine.process_turn(context, trigger_type=TriggerType.TURN_BASED)

        for insight in response.insights:
            await send_to_ui(insight)

    # --- Keyword Handling (as in the guide) ---
    async def on_keyword_detected(keyword: str, segment: dict[str, Any]) -> None:
        """Called when a keyword is detected."""
        matches = engine.check_keyword_triggers(segment["text"])
        allowed_ids = [agent.config.id for agent, _ in matches]

        context = AgentContext(
            session_id=session["id"],  # type: ignore[arg-type]
            recent_segments=session["segments"][-100:],  # type: ignore[index]
            blackboard=session["blackboard"],  # type: ignore[arg-type]
            trigger_metadata={"keyword": keyword},
        )

        response = await engine.process_turn(
            context, allowed_agent_ids=allowed_ids, trigger_type=TriggerType.KEYWORD
        )
        for insight in response.insights:
            await send_to_ui(insight)

    board: Blackboard = session["blackboard"]  # type: ignore[assignment]
    board.set_var("phase", "discovery")
    segment = {"speaker": "SELLER", "text": "What matters most to you?", "timestamp": 1.0}
    await on_transcript_segment(segment)
    price = {"speaker": "CUSTOMER", "text": "The price is too high", "timestamp": 5.0}
    await on_transcript_segment(price)  # sales coach is cooling down (cooldown 10)
    await on_keyword_detected("price", price)

    assert [(i.agent_id, i.type) for i in sent] == [
        ("sales_coach", InsightType.PRAISE),
        ("price_watcher", InsightType.WARNING),
    ]
    assert board.get_var("sys.turn_count") == 0  # keyword context left turn_count at 0


async def test_creating_a_custom_agent() -> None:
    # --- Creating a Custom Agent (as in the guide; Event comes from core.models) ---
    class MyAgent(BaseAgent):
        def __init__(self) -> None:
            super().__init__(
                AgentConfig(
                    name="My Agent",
                    id="my-agent",
                    cooldown=10,
                    trigger_types=[TriggerType.TURN_BASED],
                    priority=5,
                )
            )

        async def evaluate(self, context: AgentContext) -> AgentResponse:
            response = AgentResponse()

            last_text = context.recent_segments[-1].text

            if "urgent" in last_text.lower():
                response.insights.append(
                    self.create_insight(
                        content="Urgency detected. Escalate if needed.", type=InsightType.WARNING
                    )
                )
                # Emit event for other agents
                response.events.append(
                    Event(
                        name="urgency_detected",
                        payload={"text": last_text},
                        source_agent=self.config.id,
                    )
                )

            return response

    escalation = DynamicAgent(
        {
            "name": "Escalation",
            "trigger_config": {
                "mode": "event",
                "subscribed_events": ["urgency_detected"],
                "cooldown": 0,
            },
            "text": "Escalate: {{ blackboard.events[0].payload.text }}",
        },
        adapter=ScriptedAdapter([json.dumps({"has_insight": True, "content": "Call manager"})]),
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(MyAgent())
    engine.register_agent(escalation)
    context = AgentContext(
        session_id="s",
        recent_segments=[TranscriptSegment(speaker="C", text="This is URGENT", timestamp=0.0)],
        blackboard=Blackboard(),
    )
    response = await engine.process_turn(context)
    assert [(i.agent_id, i.content) for i in response.insights] == [
        ("my-agent", "Urgency detected. Escalate if needed."),
        ("escalation", "Call manager"),
    ]
    assert response.events[0].source_agent == "my-agent"


async def test_enabling_debugging(caplog: pytest.LogCaptureFixture) -> None:
    tracer = StructuredLogTracer()
    engine = AgentEngine(api_key="...", callbacks=[tracer])
    engine.register_agent(DynamicAgent({**PRICE_WATCHER, "trigger_config": {"mode": "turn_based"}}))

    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    tracer.logger.logger.addHandler(handler)
    try:
        await engine.process_turn(AgentContext(session_id="s", recent_segments=[]))
    finally:
        tracer.logger.logger.removeHandler(handler)
    messages = [json.loads(line)["message"] for line in records]
    assert messages[0] == "realtime.turn.started"
    assert "realtime.agent.completed" in messages
    assert messages[-1] == "realtime.turn.completed"
    trace = tracer.last_trace
    assert trace is not None
    assert trace["phases"][0]["agents_run"][0]["agent"] == "Price Watcher"


async def test_documented_priority_example() -> None:
    class Writer(BaseAgent):
        def __init__(self, agent_id: str, priority: int, phase: str) -> None:
            super().__init__(AgentConfig(name=agent_id, priority=priority, cooldown=0))
            self.phase = phase

        async def evaluate(self, context: AgentContext) -> AgentResponse:
            return AgentResponse(variable_updates={"phase": self.phase})

    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(Writer("b", 10, "negotiation"))
    engine.register_agent(Writer("a", 5, "closing"))
    board = Blackboard()
    await engine.process_turn(AgentContext(session_id="s", recent_segments=[], blackboard=board))
    assert board.variables["phase"] == "negotiation"


def test_update_api_key_rebuilds_the_default_adapter(fake_litellm: type[FakeLiteLLM]) -> None:
    engine = AgentEngine(api_key="old")
    first = engine.get_adapter()
    assert engine.get_adapter() is first
    engine.update_api_key("new")
    assert engine.get_adapter() is not first
    assert fake_litellm.created == [{"api_key": "old"}, {"api_key": "new"}]
    keep = ScriptedAdapter()
    engine = AgentEngine(adapter=keep)
    engine.update_api_key("other")
    assert engine.get_adapter() is keep


def test_engine_does_not_create_an_adapter_until_needed(fake_litellm: type[FakeLiteLLM]) -> None:
    engine = AgentEngine(api_key="sk-...")
    engine.register_agent(DynamicAgent(SALES_COACH))
    assert fake_litellm.created == []
