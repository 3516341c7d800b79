"""The 2.6 output formats: default_v2, ui_control, widget_control, and their shipped schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rt_support import dynamic_config, make_context, reply_json

import deskwork.realtime.library.output_formats as formats
from deskwork.realtime import AgentEngine, AgentResponse, Blackboard, InsightType
from deskwork.realtime.library import DynamicAgent, get_output_format
from deskwork.testing import ScriptedAdapter

SCHEMA_DIR = Path(formats.__file__).parent / "schemas"
BUILT_IN = ["default", "default_v2", "v2_raw", "ui_control", "widget_control"]


async def run(output_format: str, reply: str) -> tuple[AgentResponse, Blackboard, ScriptedAdapter]:
    adapter = ScriptedAdapter([reply])
    engine = AgentEngine(adapter=adapter)
    engine.register_agent(DynamicAgent(dynamic_config(output_format=output_format, id="ui")))
    board = Blackboard()
    response = await engine.process_turn(make_context(board=board))
    return response, board, adapter


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_built_in_format_ships_its_json_schema(name: str) -> None:
    shipped = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
    assert shipped["$schema"].startswith("https://json-schema.org/")
    assert shipped["title"] == name
    # the file is what the model sees, and it describes the model that reads the reply
    assert get_output_format(name).json_schema == shipped
    assert (SCHEMA_DIR / f"{name}.json").read_text() == formats.schema_json(name)


async def test_default_v2_reads_the_full_default_shape() -> None:
    response, board, adapter = await run(
        "default_v2",
        reply_json(
            has_insight=True,
            content="Mention the pilot.",
            type="opportunity",
            events=[{"name": "pilot_offered"}],
            variable_updates={"phase": "closing"},
            queue_pushes={"todo": "send deck"},
            facts=[{"type": "timeline", "value": "Q3"}],
            memory_updates={"offers": 1},
        ),
    )
    assert [(i.content, i.type) for i in response.insights] == [
        ("Mention the pilot.", InsightType.OPPORTUNITY)
    ]
    assert [e.name for e in response.events] == ["pilot_offered"]
    assert (board.get_var("phase"), board.queues["todo"]) == ("closing", ["send deck"])
    assert board.get_fact("timeline").value == "Q3"  # type: ignore[union-attr]
    assert board.get_memory("ui") == {"offers": 1}
    assert '"has_insight"' in adapter.calls[0]["messages"][0]["content"]


async def test_2_6_default_replies_with_message_are_read() -> None:
    response, _, _ = await run("default", reply_json(has_insight=True, message="Slow down."))
    assert [i.content for i in response.insights] == ["Slow down."]


@pytest.mark.parametrize("name", ["ui_control", "widget_control"])
async def test_ui_formats_map_actions_insight_and_state(name: str) -> None:
    actions: list[dict[str, Any]] = [
        {"target_widget": "sentiment_meter", "action": "set", "payload": {"value": 0.7}},
        {"target_widget": "flash_zone", "action": "flash"},
    ]
    response, board, adapter = await run(
        name,
        reply_json(
            insight={"type": "warning", "content": "Customer is cooling off.", "confidence": 0.8},
            ui_actions=actions,
            state_snapshot={"sentiment": 0.7},
        ),
    )
    [insight] = response.insights
    assert (insight.type, insight.content, insight.confidence) == (
        InsightType.WARNING,
        "Customer is cooling off.",
        0.8,
    )
    assert response.data == {"ui": {"ui_actions": [actions[0], {**actions[1], "payload": {}}]}}
    assert board.get_var("sentiment") == 0.7
    assert '"ui_actions"' in adapter.calls[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        {"ui_actions": [{"target_widget": "goals", "action": "update", "payload": {"x": 1}}]},
        {"insight": {"content": ""}, "ui_actions": []},  # empty insight: stay silent
        {"insight": {}, "ui_actions": [], "state_snapshot": {"k": 1}},
    ],
)
async def test_ui_control_without_content_says_nothing(reply: dict[str, Any]) -> None:
    response, _, _ = await run("ui_control", json.dumps(reply))
    assert response.insights == []


async def test_ui_control_allows_a_voice_only_reply() -> None:
    response, _, _ = await run("ui_control", reply_json(insight={"content": "Good question."}))
    assert [i.content for i in response.insights] == ["Good question."]
    assert response.data == {}


@pytest.mark.parametrize(
    ("name", "reply", "problem"),
    [
        ("widget_control", {"insight": {"content": "hi"}}, "ui_actions"),
        ("ui_control", {"ui_actions": [{"action": "set"}]}, "target_widget"),
        ("ui_control", {"ui_actions": "flash"}, "ui_actions"),
        ("widget_control", {"ui_actions": [{"target_widget": "w", "action": ""}]}, "action"),
    ],
)
async def test_replies_that_break_the_ui_schema_are_error_insights(
    name: str, reply: dict[str, Any], problem: str
) -> None:
    response, board, _ = await run(name, json.dumps({**reply, "state_snapshot": {"k": 1}}))
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert f"does not fit output format {name!r}" in insight.content
    assert problem in insight.content
    assert not board.has_var("k")  # nothing of a broken reply is applied
