"""DynamicAgent over ScriptedAdapter: formats, prompts, context, sandbox, bad replies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jinja2 import TemplateError
from rt_support import dynamic_config, make_context, reply_json

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import (
    AgentEngine,
    AgentResponse,
    Blackboard,
    Event,
    Fact,
    InsightType,
    TriggerType,
)
from deskwork.realtime.library import (
    DynamicAgent,
    OutputFormat,
    OutputMapping,
    get_output_format,
    register_output_format,
)
from deskwork.testing import ScriptedAdapter, fail, reply


async def run(
    agent: DynamicAgent, adapter: ScriptedAdapter, **context: Any
) -> tuple[AgentResponse, Blackboard]:
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(agent)
    board = context.pop("board", None) or Blackboard()
    response = await engine.process_turn(make_context(board=board, **context))
    return response, board


def system_prompt(adapter: ScriptedAdapter, call: int = 0) -> str:
    content: str = adapter.calls[call]["messages"][0]["content"]
    return content


def user_prompt(adapter: ScriptedAdapter, call: int = 0) -> str:
    content: str = adapter.calls[call]["messages"][1]["content"]
    return content


# --------------------------------------------------------------- output formats


async def test_default_format_gives_an_insight_and_updates() -> None:
    adapter = ScriptedAdapter(
        [
            reply_json(
                has_insight=True,
                content="Price objection. Focus on value.",
                type="warning",
                confidence=0.9,
                metadata={"zone": "A"},
                action_label="Show ROI",
                variable_updates={"phase": "negotiation"},
                queue_pushes={"pending": ["q1"]},
                facts=[{"type": "budget", "key": "primary", "value": 50000, "confidence": 0.8}],
                memory_updates={"objections": 1},
                events=[{"name": "objection_raised", "payload": {"type": "price"}}],
            )
        ]
    )
    response, board = await run(DynamicAgent(dynamic_config("Sales Coach")), adapter)
    [insight] = response.insights
    assert (insight.agent_id, insight.agent_name) == ("sales_coach", "Sales Coach")
    assert (insight.type, insight.confidence, insight.action_label) == (
        InsightType.WARNING,
        0.9,
        "Show ROI",
    )
    assert insight.metadata == {"zone": "A"}
    assert board.get_var("phase") == "negotiation"
    assert board.queues["pending"] == ["q1"]
    assert board.get_fact("budget", "primary").source_agent == "sales_coach"  # type: ignore[union-attr]
    assert board.get_memory("sales_coach") == {"objections": 1}
    assert [e.name for e in response.events] == ["objection_raised"]
    schema_hint = '"has_insight"'
    assert schema_hint in system_prompt(adapter)
    assert adapter.calls[0]["response_format"] == {"type": "json_object"}


async def test_has_insight_false_still_applies_events_and_updates() -> None:
    adapter = ScriptedAdapter(
        [
            reply_json(
                has_insight=False,
                content="ignored",
                events=[{"name": "question_detected", "payload": {"question": "Pricing?"}}],
                variable_updates={"questions": 1},
            )
        ]
    )
    response, board = await run(DynamicAgent(dynamic_config()), adapter)
    assert response.insights == []
    assert board.get_var("questions") == 1
    assert [e.payload for e in response.events] == [{"question": "Pricing?"}]


async def test_v2_raw_format_reads_the_response_shape() -> None:
    adapter = ScriptedAdapter(
        [
            reply_json(
                insights=[{"content": "one", "type": "praise"}, {"content": "two"}],
                facts=[{"type": "timeline", "value": "Q2"}],
                data={"score": 3},
            )
        ]
    )
    agent = DynamicAgent(dynamic_config(output_format="v2_raw"))
    response, board = await run(agent, adapter)
    assert [(i.content, i.type) for i in response.insights] == [
        ("one", InsightType.PRAISE),
        ("two", InsightType.SUGGESTION),
    ]
    assert board.get_fact("timeline").value == "Q2"  # type: ignore[union-attr]
    assert response.data == {"coach": {"score": 3}}
    assert '"insights"' in system_prompt(adapter)


async def test_custom_output_format_with_its_own_schema_and_mapping() -> None:
    schema = {
        "type": "object",
        "properties": {
            "advice": {
                "type": "object",
                "properties": {
                    "show": {"type": "boolean"},
                    "text": {"type": "string"},
                    "kind": {"type": "string"},
                    "state": {"type": "object"},
                },
            }
        },
    }
    register_output_format(
        OutputFormat(
            name="widget_test",
            json_schema=schema,
            instruction="Return the widget JSON.",
            mapping=OutputMapping(
                root_key="advice",
                check_field="show",
                content_field="text",
                type_field="kind",
                state_field="state",
            ),
        ),
        replace=True,
    )
    assert get_output_format("widget_test").json_schema == schema
    adapter = ScriptedAdapter(
        [reply_json(advice={"show": True, "text": "Smile", "kind": "praise", "state": {"w": 1}})]
    )
    response, board = await run(DynamicAgent(dynamic_config(output_format="widget_test")), adapter)
    assert [(i.content, i.type) for i in response.insights] == [("Smile", InsightType.PRAISE)]
    assert board.get_var("w") == 1
    assert "Return the widget JSON." in system_prompt(adapter)
    assert json.dumps(schema, separators=(",", ":")) in system_prompt(adapter)


def test_output_format_names_must_be_known_and_unique() -> None:
    with pytest.raises(ConfigurationError, match="unknown output_format 'nope'"):
        DynamicAgent(dynamic_config(output_format="nope"), strict=True)
    with pytest.raises(ConfigurationError, match="already exists"):
        register_output_format(OutputFormat(name="default", json_schema={}))


# ------------------------------------------------------------------- prompts


async def test_include_context_adds_user_context_and_rag_docs() -> None:
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    context = {
        "user_context": "Sales Director at Acme Corp",
        "rag_docs": ["Doc A", "Doc B"],
        "language_directive": "Respond in Spanish",
    }
    await run(DynamicAgent(dynamic_config()), adapter, **context)
    prompt = system_prompt(adapter)
    assert "Sales Director at Acme Corp" in prompt
    assert "[1] Doc A" in prompt and "[2] Doc B" in prompt
    assert "Respond in Spanish" in prompt

    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    await run(DynamicAgent(dynamic_config(include_context=False)), adapter, **context)
    prompt = system_prompt(adapter)
    assert "Acme" not in prompt and "Doc A" not in prompt
    assert "Respond in Spanish" in prompt  # the language directive is always injected


async def test_context_turns_limits_the_transcript() -> None:
    segments = [("CUSTOMER", f"message {i}") for i in range(10)]
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    agent = DynamicAgent(dynamic_config(model_config={"context_turns": 3}))
    await run(agent, adapter, segments=segments)
    transcript = user_prompt(adapter)
    assert "CUSTOMER: message 9" in transcript and "CUSTOMER: message 7" in transcript
    assert "message 6" not in transcript

    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    await run(DynamicAgent(dynamic_config()), adapter, segments=segments)  # default: 6
    assert "message 4" in user_prompt(adapter) and "message 3" not in user_prompt(adapter)


async def test_model_comes_from_config() -> None:
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    agent = DynamicAgent(
        dynamic_config(
            model_config={
                "model": "anthropic/claude-haiku-4-5",
                "temperature": 0.2,
                "max_tokens": 300,
            }
        )
    )
    await run(agent, adapter)
    call = adapter.calls[0]
    assert call["model"] == "anthropic/claude-haiku-4-5"
    assert agent.config.model == "anthropic/claude-haiku-4-5"
    assert DynamicAgent(dynamic_config()).config.model == "gpt-4o-mini"


async def test_templates_see_blackboard_v1_state_and_memory() -> None:
    text = (
        "v2={{ blackboard.variables.phase }} v1={{ state.phase }} "
        "q={{ blackboard.queues.pending_questions | length }} "
        "{% for q in blackboard.queues.pending_questions %}[{{ q }}]{% endfor %} "
        "{% for fact in blackboard.facts %}"
        "{{ fact.type }}:{{ fact.value }}({{ fact.confidence }})"
        "{% endfor %} "
        "mem={{ blackboard.memory[agent_id].counter }} v1mem={{ memory.counter }} "
        "none={{ blackboard.memory['ghost'].counter }}|{{ blackboard.variables.missing }} "
        "session={{ context.session_id }} turn={{ turn_count }} user={{ user_context }}"
    )
    board = Blackboard(
        variables={"phase": "negotiation"},
        queues={"pending_questions": ["What's the price?", "When?"]},
        facts=[Fact(type="budget", value="$50,000", confidence=0.9)],
        memory={"coach": {"counter": 4}},
    )
    adapter = ScriptedAdapter(default=reply_json(has_insight=False))
    await run(
        DynamicAgent(dynamic_config(text=text)),
        adapter,
        board=board,
        turn_count=7,
        user_context="Seller",
    )
    prompt = system_prompt(adapter)
    assert "v2=negotiation v1=negotiation" in prompt
    assert "q=2 [What's the price?][When?]" in prompt
    assert "budget:$50,000(0.9)" in prompt
    assert "mem=4 v1mem=4" in prompt
    assert "none=|" in prompt
    assert "session=session-1 turn=7 user=Seller" in prompt


async def test_event_agents_see_the_events_of_the_turn() -> None:
    adapter = ScriptedAdapter(
        [
            reply_json(
                has_insight=False,
                events=[{"name": "question_detected", "payload": {"question": "Pricing?"}}],
            ),
            reply_json(has_insight=True, content="It costs 10k"),
        ]
    )
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(DynamicAgent(dynamic_config("Extractor")))
    engine.register_agent(
        DynamicAgent(
            dynamic_config(
                "Responder",
                trigger_config={
                    "mode": "event",
                    "subscribed_events": ["question_detected"],
                    "cooldown": 0,
                },
                text="Answer: {{ blackboard.events[0].payload.question }}",
            )
        )
    )
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == ["It costs 10k"]
    assert "Answer: Pricing?" in system_prompt(adapter, 1)
    assert "question_detected" in user_prompt(adapter, 1)


async def test_agent_adapter_overrides_the_engine_adapter() -> None:
    own = ScriptedAdapter(default=reply_json(has_insight=True, content="mine"))
    engine_adapter = ScriptedAdapter()
    engine = AgentEngine(adapter=engine_adapter)
    engine.register_agent(DynamicAgent(dynamic_config(), adapter=own))
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == ["mine"]
    assert engine_adapter.calls == []


# ------------------------------------------------------------------ sandbox

ESCAPES = [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ joiner.__init__.__globals__ }}",
    "{{ lipsum.__globals__ }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ self.__init__.__globals__ }}",
    "{{ ''|attr('__class__') }}",
    "{{ blackboard.__class__ }}",
    "{{ blackboard['__class__'] }}",
    "{{ '{0.__class__}'.format('') }}",
    "{{ blackboard.variables.update({'x': 1}) }}",
    "{% set x = blackboard.queues.pending.append(1) %}",
    "{{ 'a' * 100000000 }}",
    "{{ 2 ** 100000000 }}",
]


@pytest.mark.parametrize("template", ESCAPES)
def test_sandbox_escapes_fail_with_a_template_error(template: str) -> None:
    agent = DynamicAgent(dynamic_config(text=template))
    board = Blackboard(queues={"pending": []})
    with pytest.raises(TemplateError) as caught:
        agent.build_messages(make_context(board=board))
    assert "object at 0x" not in str(caught.value)
    assert "<class" not in str(caught.value)


async def test_sandbox_escape_in_a_turn_is_an_error_insight_without_leaking() -> None:
    adapter = ScriptedAdapter()
    agent = DynamicAgent(dynamic_config(text="{{ cycler.__init__.__globals__ }}"))
    response, _ = await run(agent, adapter)
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert "SecurityError" in insight.content
    assert "__builtins__" not in insight.content
    assert adapter.calls == []  # the model is never called


RESOURCE_BOMBS = [
    "{{ 'x'.ljust(10**8) }}",
    "{{ 'x'.zfill(width=10**8) }}",
    "{{ '{:>100000000}'.format(1) }}",
    "{{ '{:>{w}}'.format(1, w=100000000) }}",
    "{{ '{x:>100000000}'.format_map({'x': 1}) }}",
    "{{ '%100000000d' % 1 }}",
    "{{ '%100000000d'|format(1) }}",
    "{{ 'a'|center(100000000) }}",
    "{{ 'a'|indent(100000000, true) }}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% for i in range(300) %}{{ 'x' * 1000 }}{% endfor %}",
]


@pytest.mark.parametrize("template", RESOURCE_BOMBS)
def test_templates_cannot_allocate_or_loop_without_bound(template: str) -> None:
    agent = DynamicAgent(dynamic_config(text=template))
    with pytest.raises(TemplateError, match=r"too large|too long|not allowed"):
        agent.build_messages(make_context(board=Blackboard()))


def test_ordinary_formatting_still_renders() -> None:
    text = (
        "{{ '%5d'|format(3) }}|{{ 'ab'|center(6) }}|{{ 'x'.ljust(3) }}|"
        "{{ '{:>4}'.format(1) }}|{{ '{:.2f}'.format(3.14159) }}|"
        "{% for i in range(3) %}{{ i }}{% endfor %}"
    )
    agent = DynamicAgent(dynamic_config(text=text))
    system = agent.build_messages(make_context(board=Blackboard()))[0]["content"]
    assert system.startswith("3|  ab  |x  |   1|3.14|012")  # the prompt is stripped


async def test_a_resource_bomb_is_an_error_insight_and_others_still_answer() -> None:
    adapter = ScriptedAdapter(default=reply(reply_json(has_insight=True, content="fine")))
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(DynamicAgent(dynamic_config(id="bomb", text="{{ 'x'.ljust(10**9) }}")))
    engine.register_agent(DynamicAgent(dynamic_config(id="calm", text="Be helpful.")))
    response = await engine.process_turn(make_context(board=Blackboard()))
    by_agent = {i.agent_id: i for i in response.insights}
    assert by_agent["bomb"].type == InsightType.ERROR
    assert by_agent["calm"].content == "fine"


# -------------------------------------------------------------- bad replies


@pytest.mark.parametrize(
    ("model_reply", "message"),
    [
        ("Sure! Here is my advice: focus on value.", "not valid JSON"),
        ('{"has_insight": true, "content": "x",', "not valid JSON"),
        ("[1, 2, 3]", "must be a JSON object"),
        ("", "empty reply"),
        (reply_json(has_insight=True, content="x", confidence="high"), "confidence"),
        (reply_json(has_insight=True, content="x", type="tip"), "type"),
        (reply_json(events=[{"payload": {}}]), "events"),
    ],
)
async def test_invalid_reply_is_an_error_insight_and_applies_nothing(
    model_reply: str, message: str
) -> None:
    adapter = ScriptedAdapter(
        [
            reply(model_reply),
            reply_json(has_insight=True, content="fine", variable_updates={"b": 2}),
        ]
    )
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(DynamicAgent(dynamic_config("Broken")))
    engine.register_agent(DynamicAgent(dynamic_config("Healthy")))
    board = Blackboard()
    before = board.as_dict()["queues"]
    response = await engine.process_turn(make_context(board=board))
    by_agent = {i.agent_id: i for i in response.insights}
    assert by_agent["broken"].type == InsightType.ERROR
    assert message in by_agent["broken"].content
    assert by_agent["healthy"].content == "fine"
    assert board.variables.keys() - {"sys.turn_count", "sys.session_id", "sys.trigger_type"} == {
        "b"
    }
    assert board.as_dict()["queues"] == before


async def test_fenced_json_reply_is_accepted() -> None:
    adapter = ScriptedAdapter([reply('```json\n{"has_insight": true, "content": "ok"}\n```')])
    response, _ = await run(DynamicAgent(dynamic_config()), adapter)
    assert [i.content for i in response.insights] == ["ok"]


async def test_model_error_is_an_error_insight() -> None:
    adapter = ScriptedAdapter([fail(ConnectionError("provider down"))])
    response, _ = await run(DynamicAgent(dynamic_config()), adapter)
    assert "ConnectionError: provider down" in response.insights[0].content


async def test_runtime_template_error_is_an_error_insight() -> None:
    agent = DynamicAgent(dynamic_config(text="{{ blackboard.variables.count + 1 }}"))
    response, _ = await run(agent, ScriptedAdapter())
    assert response.insights[0].type == InsightType.ERROR
    assert "UndefinedError" in response.insights[0].content


# ------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"text": "x"}, "name"),
        ({"name": "a"}, "text"),
        ({"name": "a", "text": "{% if %}"}, "template syntax error"),
        ({"name": "a", "text": "{{ x "}, "template syntax error"),
        ({"name": "a", "text": "x", "priority": "high"}, "priority"),
        ({"name": "a", "text": "x", "model_config": {"context_turns": -1}}, "context_turns"),
    ],
)
def test_invalid_config_is_a_configuration_error(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        DynamicAgent(config, strict=True)


def test_full_configuration_schema_from_the_docs() -> None:
    config = {
        "id": "sales-coach",
        "name": "Sales Coach",
        "trigger_config": {
            "mode": ["turn_based", "keyword"],
            "cooldown": 15,
            "keywords": ["price", "discount"],
            "silence_threshold": 5,
            "subscribed_events": ["question_detected"],
        },
        "trigger_conditions": {
            "mode": "all",
            "rules": [{"var": "phase", "op": "eq", "value": "negotiation"}],
        },
        "priority": 0,
        "model_config": {"model": "gpt-4o-mini", "context_turns": 30},
        "text": "Your system prompt here with {{ agent_id }} templating",
        "output_format": "default",
        "include_context": True,
        "created_at": "2026-01-01",  # a database column: ignored
    }
    agent = DynamicAgent(config)
    assert agent.config.id == "sales-coach"
    assert agent.config.trigger_types == [TriggerType.TURN_BASED, TriggerType.KEYWORD]
    assert agent.settings.llm.context_turns == 30
    assert agent.raw_config == config
    assert agent.config.trigger_conditions is not None


async def test_custom_agent_events_from_usage_guide_shape() -> None:
    # events built with Event(name=..., payload=..., source_agent=...) need no timestamp
    event = Event(name="urgency_detected", payload={"text": "x"}, source_agent="my-agent")
    assert event.timestamp > 0 and event.id is None
