"""A workforce over the real LiteLLM/HTTP path, against the local OpenAI-compatible server."""

from __future__ import annotations

import json

from deskwork import Desk, EventType, Job, Worker, Workforce
from deskwork.adapters import LiteLLMAdapter
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import tool, transfer_to_agent_tool


@tool()
def check_stock(item: str) -> int:
    """How many units of an item are in stock."""
    return {"oat milk": 30}.get(item, 0)


def test_managed_workforce_over_http() -> None:
    with OpenAICompatServer() as server:
        server.enqueue(
            ServerReply.json({"worker": "stockroom"}),  # the manager's structured choice
            ServerReply.tool_calls([("check_stock", {"item": "oat milk"})]),
            ServerReply.text("30 units of oat milk."),
        )
        adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-key-123456")
        desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
        writer = Worker(name="writer", instructions="You write copy.")
        stockroom = Worker(name="stockroom", tools=[check_stock], instructions="Check stock.")
        team = Workforce([writer, stockroom], mode="managed", manager=writer)
        report = desk.run(team, Job(input="How much oat milk is left?"))
        bodies = [r.body for r in server.requests]

    assert report.status == "completed", report.errors
    assert report.content == "30 units of oat milk."
    manager_call = bodies[0]
    assert "tools" not in manager_call  # selection runs with tools disabled
    schema = manager_call["response_format"]["json_schema"]["schema"]
    assert "worker" in schema["properties"]
    assert bodies[1]["tools"][0]["function"]["name"] == "check_stock"
    assert report.metrics["llm_calls"] == 3
    types = [e.type for e in report.events]
    assert types[0] == EventType.RUN_STARTED and types[-1] == EventType.RUN_COMPLETED
    assert EventType.WORKFORCE_STARTED in types and EventType.WORKFORCE_COMPLETED in types


def test_swarm_handoff_over_http() -> None:
    with OpenAICompatServer() as server:
        server.enqueue(
            ServerReply.tool_calls(
                [("transfer_to_agent", {"agent_name": "stockroom", "context": "oat milk?"})]
            ),
            ServerReply.tool_calls([("check_stock", {"item": "oat milk"})]),
            ServerReply.text("Plenty: 30."),
        )
        adapter = LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-key-123456")
        desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
        front = Worker(
            name="front", tools=[transfer_to_agent_tool(["stockroom"])], instructions="FRONT RULES"
        )
        stockroom = Worker(name="stockroom", tools=[check_stock], instructions="STOCK RULES")
        report = desk.run(Workforce([front, stockroom], mode="swarm"), Job(input="oat milk?"))
        after_handoff = server.requests[1].body["messages"]

    assert report.status == "completed", report.errors
    assert report.content == "Plenty: 30."
    system_texts = json.dumps([m for m in after_handoff if m["role"] == "system"])
    assert "STOCK RULES" in system_texts and "FRONT RULES" not in system_texts
    assert any(e.type == EventType.WORKFORCE_HANDOFF for e in report.events)
