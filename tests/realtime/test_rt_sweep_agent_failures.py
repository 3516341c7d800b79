"""An agent's own timeout and a cancelled future it awaited are that agent's failures: they
are not blamed on the engine's ``agent_timeout`` and do not cancel the turn."""

from __future__ import annotations

import asyncio

from rt_support import ScriptAgent, make_context

from deskwork.event_bus import EventBus
from deskwork.realtime import AgentContext, AgentEngine, AgentResponse, InsightType
from deskwork.testing import ScriptedAdapter


class OwnTimeout(ScriptAgent):
    """Calls a backend with its own short deadline (``wait_for``), which expires."""

    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        await asyncio.wait_for(asyncio.sleep(60), 0.01)
        return None


class CancelledBackend(ScriptAgent):
    """Awaits a request that its client library cancelled (a closed connection pool)."""

    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        request = asyncio.get_running_loop().create_future()
        request.cancel()
        return await request


def _engine(*agents: ScriptAgent, bus: EventBus | None = None) -> AgentEngine:
    engine = AgentEngine(adapter=ScriptedAdapter(), agent_timeout=30, event_bus=bus)
    for agent in agents:
        engine.register_agent(agent)
    return engine


async def test_an_agents_own_timeout_is_not_reported_as_the_engines() -> None:
    bus = EventBus()
    failed: list[str] = []
    bus.subscribe("realtime.agent.failed", lambda e: failed.append(e.payload["error"]))
    response = await _engine(OwnTimeout("lookup"), bus=bus).process_turn(make_context())
    [insight] = response.insights
    assert insight.type == InsightType.ERROR
    assert "timed out after 30" not in insight.content  # it ran 10 ms, not the engine's 30 s
    assert insight.content == "Agent 'Lookup' failed: TimeoutError: timed out"
    assert failed == ["TimeoutError: timed out"]


async def test_a_cancelled_future_an_agent_awaited_fails_that_agent_only() -> None:
    board_writer = ScriptAgent("writer", response=AgentResponse(variable_updates={"seen": 1}))
    context = make_context()
    response = await _engine(CancelledBackend("backend"), board_writer).process_turn(context)
    [error] = response.insights
    assert (error.agent_id, error.type) == ("backend", InsightType.ERROR)
    assert "CancelledError: something agent 'backend' awaited was cancelled" in error.content
    assert context.blackboard is not None and context.blackboard.get_var("seen") == 1
