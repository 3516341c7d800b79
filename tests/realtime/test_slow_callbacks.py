"""A callback that never returns does not hang the turn it observes.

Observers never break a turn (callbacks.py): a hook that raised was already logged and
ignored, but a hook that hung (an awaited UI push that never completes) held the turn for
good, agent timeouts notwithstanding. Each hook call now gets the engine's
``agent_timeout``; one that exceeds it is logged and abandoned.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentCallbackHandler, AgentContext, AgentEngine
from deskwork.testing import ScriptedAdapter


class Hangs(AgentCallbackHandler):
    def __init__(self) -> None:
        self.cancelled = False

    async def on_agent_start(self, agent_name: str, context: AgentContext) -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_a_hook_that_hangs_is_abandoned_after_the_agent_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook = Hangs()
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[hook], agent_timeout=0.05)
    engine.register_agent(ScriptAgent("a"))
    with caplog.at_level(logging.WARNING, logger="deskwork.realtime.engine"):
        response = await asyncio.wait_for(engine.process_turn(make_context()), 5)
    assert response.debug_info["phases"][0]["agents_run"] == ["a"]
    assert hook.cancelled
    assert any(
        "Hangs.on_agent_start timed out after 0.05s" in r.getMessage() for r in caplog.records
    )


async def test_without_an_agent_timeout_hooks_are_awaited_to_the_end() -> None:
    class Slow(AgentCallbackHandler):
        done = False

        async def on_turn_end(self, response: object, duration: float) -> None:  # type: ignore[override]
            await asyncio.sleep(0.05)
            Slow.done = True

    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[Slow()], agent_timeout=None)
    engine.register_agent(ScriptAgent("a"))
    await engine.process_turn(make_context())
    assert Slow.done
