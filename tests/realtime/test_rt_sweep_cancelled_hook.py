"""A callback whose own await was cancelled (a UI push over a websocket that closed) is a
failed hook, logged and skipped: it no longer cancels the turn and loses its work."""

from __future__ import annotations

import asyncio
import logging

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentCallbackHandler, AgentEngine, AgentResponse
from deskwork.testing import ScriptedAdapter


class PushToUi(AgentCallbackHandler):
    async def on_agent_finish(
        self, agent_name: str, response: AgentResponse | None, duration: float
    ) -> None:
        send = asyncio.get_running_loop().create_future()
        send.cancel()  # the socket closed under the send
        await send


async def test_a_hook_whose_await_was_cancelled_does_not_cancel_the_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[PushToUi()])
    engine.register_agent(ScriptAgent("coach", response=AgentResponse(variable_updates={"tip": 1})))
    context = make_context()
    with caplog.at_level(logging.WARNING, logger="deskwork.realtime.engine"):
        response = await engine.process_turn(context)
    assert response.variable_updates == {"tip": 1}
    assert context.blackboard is not None and context.blackboard.get_var("tip") == 1
    assert "realtime callback PushToUi.on_agent_finish failed" in caplog.text
