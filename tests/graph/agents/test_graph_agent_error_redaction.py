"""An agent's failure text is redacted in the AgentProcessError deskwork builds from it; the
original exception stays reachable as its cause, redacted in place (every traceback of the
AgentProcessError prints it)."""

from __future__ import annotations

import pytest
from langchain_core.runnables import RunnableConfig

from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.exceptions import AgentProcessError
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.testing import make_test_state

KEY = "sk-live-abcdef0123456789"


class LeakyAgent(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        raise RuntimeError(f"auth failed for {KEY}")


async def test_agent_process_error_text_is_redacted() -> None:
    agent = LeakyAgent(AgentConfig(name="leaky", type="custom", description="leaks"))
    with pytest.raises(AgentProcessError) as caught:
        await agent.invoke(make_test_state())
    assert str(caught.value).endswith("RuntimeError: auth failed for <redacted>")
    assert KEY not in str(caught.value)
    cause = caught.value.cause  # the original exception, for the code that catches it ...
    assert isinstance(cause, RuntimeError) and caught.value.__cause__ is cause
    assert str(cause) == "auth failed for <redacted>"  # ... redacted in place: a traceback shows it
