"""An agent failing with a secret in its text contributes an error insight without the secret,
a ``TimeoutError`` it raises itself included."""

from __future__ import annotations

import pytest
from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentEngine, InsightType
from deskwork.testing import ScriptedAdapter

KEY = "sk-live-abcdef0123456789"


@pytest.mark.parametrize("kind", [RuntimeError, TimeoutError])
async def test_a_failing_agents_secret_is_redacted_in_its_error_insight(
    kind: type[Exception],
) -> None:
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(ScriptAgent("broken", error=kind(f"upstream refused {KEY}")))
    response = await engine.process_turn(make_context())
    [error] = response.insights
    assert error.type == InsightType.ERROR
    assert f"{kind.__name__}: upstream refused <redacted>" in error.content
    assert KEY not in error.content and KEY not in str(response.debug_info)
