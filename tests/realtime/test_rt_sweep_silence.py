"""A silence duration the host forwards as text (a JSON or form field) is read as seconds:
"5" of silence does not wake an agent whose threshold is 30."""

from __future__ import annotations

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentEngine, TriggerType
from deskwork.testing import ScriptedAdapter


@pytest.mark.parametrize(("duration", "runs"), [("5", False), (" 45 ", True), ("soon", True)])
async def test_a_numeric_string_duration_is_held_to_the_threshold(
    duration: str, runs: bool
) -> None:
    agent = ScriptAgent("facilitator", trigger_types=[TriggerType.SILENCE], silence_threshold=30)
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(agent)
    response = await engine.process_turn(
        make_context(),
        trigger_type=TriggerType.SILENCE,
        trigger_metadata={"silence_duration": duration},
    )
    assert bool(agent.calls) is runs
    skipped = response.debug_info["phases"][0]["agents_skipped"]
    assert skipped == ({} if runs else {"facilitator": "silence_below_threshold"})
