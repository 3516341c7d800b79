"""A model call that the provider (or the adapter) times out itself is reported as that
timeout: not as the client's own limit, which it may not have ("after Nones")."""

from __future__ import annotations

import pytest
from rt_support import dynamic_config, make_context

from deskwork.realtime import AgentEngine
from deskwork.realtime.core.llm import LLMClient
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter, fail


@pytest.mark.parametrize("limit", [None, 20.0])
async def test_the_providers_own_timeout_is_not_the_clients(limit: float | None) -> None:
    client = LLMClient(ScriptedAdapter([fail(TimeoutError())]), timeout=limit)
    assert await client.generate_json("m", [{"role": "user", "content": "hi"}]) is None
    assert isinstance(client.last_error, TimeoutError)
    assert "timed out after" not in str(client.last_error)


async def test_an_agents_insight_names_no_limit_nobody_set() -> None:
    engine = AgentEngine(adapter=ScriptedAdapter(default=fail(TimeoutError())), agent_timeout=None)
    engine.register_agent(DynamicAgent(dynamic_config()))
    response = await engine.process_turn(make_context())
    assert [i.content for i in response.insights] == [
        "Agent 'Coach' failed: TimeoutError: timed out"
    ]
