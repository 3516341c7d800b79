"""SupervisorAgent streams through the one shared helper (core.llm_utils.astream_with_limits):
a failing stream is an LLMInvocationError whose message is redacted, the limiter is released,
and a limiter refusal is a RateLimitExceededError."""

from __future__ import annotations

import pytest

from deskwork.graph.agents import supervisor as supervisor_module
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core import llm_utils
from deskwork.graph.core.exceptions import LLMInvocationError, RateLimitExceededError
from deskwork.graph.core.rate_limiting import RateLimiter, SemaphoreRateLimiter
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.testing import MockLLM, make_test_state

SECRET = "auth failed for postgresql://app:hunter2@db/prod with api_key=sk-abcdefghijkl"


def make(llm: MockLLM, limiter: RateLimiter | None = None) -> SupervisorAgent:
    topology = TopologyResolver(
        TopologyConfig(
            edges=[
                TopologyEdgeConfig(from_agent="supervisor", to_agent="greeter"),
                TopologyEdgeConfig(from_agent="greeter", to_agent="supervisor"),
            ]
        )
    )
    config = AgentConfig(name="supervisor", type="supervisor", description="Routes")
    return SupervisorAgent(config, llm, topology, rate_limiter=limiter)


async def test_stream_error_message_is_redacted_and_the_limiter_released() -> None:
    limiter = SemaphoreRateLimiter(max_concurrency=1)
    agent = make(MockLLM(raise_on_call=ConnectionError(SECRET)), limiter)
    with pytest.raises(LLMInvocationError) as caught:
        async for _ in agent.astream_process(make_test_state()):
            pass
    message = str(caught.value)
    assert "ConnectionError" in message
    assert "hunter2" not in message and "sk-abcdefghijkl" not in message
    assert limiter.in_use == 0


async def test_a_refusing_limiter_is_a_rate_limit_error() -> None:
    class Refusing(RateLimiter):
        async def acquire(self) -> None:
            raise RuntimeError("no capacity")

    agent = make(MockLLM(stream_chunks=[["greeter"]]), Refusing())
    with pytest.raises(RateLimitExceededError, match="no capacity"):
        async for _ in agent.astream_process(make_test_state()):
            pass


def test_the_supervisor_uses_the_shared_stream_helper() -> None:
    assert supervisor_module.astream_with_limits is llm_utils.astream_with_limits
