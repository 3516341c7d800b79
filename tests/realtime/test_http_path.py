"""DynamicAgent over the real HTTP path: LiteLLMAdapter → local OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from rt_support import dynamic_config, make_context

from deskwork.adapters.litellm import LiteLLMAdapter
from deskwork.realtime import AgentEngine, Blackboard, InsightType
from deskwork.realtime.library import DynamicAgent
from deskwork.testing.openai_server import OpenAICompatServer, ServerReply


@pytest.fixture
async def server_and_engine() -> AsyncIterator[tuple[OpenAICompatServer, AgentEngine]]:
    with OpenAICompatServer() as server:
        adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-abcdef123456")
        yield server, AgentEngine(adapter=adapter)
        await adapter.aclose()


async def test_dynamic_agent_over_http(
    server_and_engine: tuple[OpenAICompatServer, AgentEngine],
) -> None:
    server, engine = server_and_engine
    server.enqueue(
        ServerReply.text(
            json.dumps(
                {
                    "has_insight": True,
                    "content": "Focus on value",
                    "type": "warning",
                    "variable_updates": {"phase": "negotiation"},
                    "events": [{"name": "objection_raised", "payload": {"type": "price"}}],
                }
            )
        )
    )
    engine.register_agent(
        DynamicAgent(
            dynamic_config(
                "Sales Coach",
                model_config={"model": "openai/test-model", "context_turns": 2},
                text="Phase: {{ blackboard.variables.phase }}",
            )
        )
    )
    board = Blackboard(variables={"phase": "discovery"})
    response = await engine.process_turn(
        make_context("The price is too high", board=board, language_directive="Answer in English")
    )
    [insight] = response.insights
    assert (insight.content, insight.type) == ("Focus on value", InsightType.WARNING)
    assert board.get_var("phase") == "negotiation"
    [request] = server.requests
    assert request.path.endswith("/chat/completions")
    assert request.body["model"] == "test-model"
    assert request.body["response_format"] == {"type": "json_object"}
    system, user = request.body["messages"]
    assert system["role"] == "system" and "Phase: discovery" in system["content"]
    assert "Answer in English" in system["content"]
    assert "CUSTOMER: The price is too high" in user["content"]
    assert request.headers["authorization"] == "<redacted>"


async def test_invalid_json_over_http_is_an_error_insight(
    server_and_engine: tuple[OpenAICompatServer, AgentEngine],
) -> None:
    server, engine = server_and_engine
    server.enqueue(ServerReply.text("I think you should focus on value."))
    engine.register_agent(DynamicAgent(dynamic_config(model_config={"model": "openai/test-model"})))
    board = Blackboard()
    response = await engine.process_turn(make_context(board=board))
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert "not valid JSON" in insight.content


async def test_provider_error_over_http_is_an_error_insight(
    server_and_engine: tuple[OpenAICompatServer, AgentEngine],
) -> None:
    server, engine = server_and_engine
    server.enqueue(ServerReply.error(500, "upstream exploded"))
    engine.register_agent(DynamicAgent(dynamic_config(model_config={"model": "openai/test-model"})))
    response = await engine.process_turn(make_context())
    assert response.insights[0].type == InsightType.ERROR
