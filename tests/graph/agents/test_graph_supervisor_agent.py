"""SupervisorAgent: simple-mode routing (structured + word-boundary), topology checks,
self-loops, LLM failures, streaming and ReAct mode, all with scripted models."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig

from deskwork.graph._events import graph_emitter
from deskwork.graph.agents._react_handlers import decide_handler
from deskwork.graph.agents._routing import find_agent_mention
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import (
    AgentConfig,
    RetryConfig,
    TimeoutConfig,
    TopologyConfig,
    TopologyEdgeConfig,
)
from deskwork.graph.core.exceptions import (
    LLMInvocationError,
    LLMNotConfiguredError,
    RateLimitExceededError,
    ReactExecutorNotConfiguredError,
    RoutingSelfLoopError,
)
from deskwork.graph.core.rate_limiting import RateLimiter, SemaphoreRateLimiter
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.react import ReactExecutor
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.testing import MockLLM, make_test_state

SUPERVISOR = AgentConfig(name="supervisor", type="supervisor", description="Routes requests")


def topology(default_return: str = "supervisor") -> TopologyResolver:
    edges = [
        ("supervisor", "greeter"),
        ("supervisor", "researcher"),
        ("greeter", "supervisor"),
        ("researcher", "supervisor"),
    ]
    return TopologyResolver(
        TopologyConfig(
            edges=[TopologyEdgeConfig(from_agent=a, to_agent=b) for a, b in edges],
            default_return=default_return,
        )
    )


def supervisor(llm: MockLLM, **kwargs: Any) -> SupervisorAgent:
    return SupervisorAgent(SUPERVISOR, llm, kwargs.pop("topology", topology()), **kwargs)


def routes(events: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [p for t, _, p in events if t == "graph.route"]


class TestSimpleModeText:
    async def test_exact_agent_name_routes_there_with_token_usage(self) -> None:
        llm = MockLLM(responses=["greeter"], usage_tokens={"input_tokens": 12, "output_tokens": 1})
        response = await supervisor(llm).process(make_test_state("Hello!"))
        assert response.next_agent == "greeter"
        assert response.content == "Routing to greeter."
        assert response.token_usage == {"input_tokens": 12, "output_tokens": 1, "total_tokens": 13}

    @pytest.mark.parametrize(
        ("reply", "expected"),
        [
            ("I think the Greeter should take this one.", "greeter"),
            ("Send it to researcher, then maybe greeter.", "researcher"),
            ("route: researcher.", "researcher"),
        ],
    )
    async def test_word_boundary_fallback_finds_the_earliest_agent(
        self, reply: str, expected: str
    ) -> None:
        response = await supervisor(MockLLM(responses=[reply])).process(make_test_state())
        assert response.next_agent == expected
        assert response.content == reply

    async def test_partial_words_do_not_match(self) -> None:
        # "greeters" and "greeter_v2" are not the agent "greeter": no valid route
        llm = MockLLM(responses=["greeters or greeter_v2"])
        events: list[tuple[str, str, dict[str, Any]]] = []
        with graph_emitter(lambda t, s, p: events.append((t, s, p))):
            response = await supervisor(llm).process(make_test_state())
        assert response.next_agent is None
        assert routes(events)[0]["fell_back"] is True

    async def test_finish_ends_the_turn_with_the_answer(self) -> None:
        llm = MockLLM(responses=["FINISH: Everything is answered."])
        agent = supervisor(llm)
        response = await agent.process(make_test_state())
        assert (response.next_agent, response.content) == (None, "Everything is answered.")
        update = await supervisor(MockLLM(responses=["FINISH: bye"])).invoke(make_test_state())
        assert update["current_agent"] == "supervisor"  # the END sentinel

    async def test_prompt_lists_allowed_targets_descriptions_and_memories(self) -> None:
        llm = MockLLM(responses=["greeter"])
        agent = supervisor(llm, agent_descriptions={"greeter": "Says hello"})
        state = make_test_state(
            "Hi",
            knowledge_context={"_injected_memories": [{"key": "name", "value": "Alice"}]},
        )
        await agent.process(state)
        system = str(llm.calls[0][0].content)
        assert "- greeter: Says hello" in system
        assert "- researcher" in system
        assert "- supervisor" not in system  # never offered itself as a target
        assert "- name: Alice" in system
        assert llm.calls[0][-1].content == "Hi"  # the conversation follows the system prompt

    async def test_unknown_route_falls_back_to_a_different_default_return(self) -> None:
        topo = TopologyResolver(
            TopologyConfig(
                edges=[TopologyEdgeConfig(from_agent="supervisor", to_agent="triage")],
                default_return="triage",
            )
        )
        events: list[tuple[str, str, dict[str, Any]]] = []
        with graph_emitter(lambda t, s, p: events.append((t, s, p))):
            response = await supervisor(MockLLM(responses=["banana"]), topology=topo).process(
                make_test_state()
            )
        assert response.next_agent == "triage"
        assert routes(events) == [
            {
                "from": "supervisor",
                "requested": "banana",
                "chosen": "triage",
                "fell_back": True,
                "by": "supervisor",
            }
        ]


class TestSelfLoopAndTopology:
    async def test_routing_to_itself_raises(self) -> None:
        with pytest.raises(RoutingSelfLoopError, match="supervisor"):
            await supervisor(MockLLM(responses=["supervisor"])).invoke(make_test_state())

    async def test_structured_self_route_raises(self) -> None:
        llm = MockLLM(structured_responses=[{"next_agent": "Supervisor", "content": "me"}])
        with pytest.raises(RoutingSelfLoopError):
            await supervisor(llm, use_structured_output=True).process(make_test_state())

    async def test_route_outside_the_topology_is_not_followed(self) -> None:
        # "billing" exists nowhere in the topology: the supervisor must not route there
        llm = MockLLM(structured_responses=[{"next_agent": "billing", "content": "billing!"}])
        events: list[tuple[str, str, dict[str, Any]]] = []
        with graph_emitter(lambda t, s, p: events.append((t, s, p))):
            response = await supervisor(llm, use_structured_output=True).process(make_test_state())
        assert response.next_agent is None  # default_return is the supervisor itself: finish
        assert routes(events) == [
            {
                "from": "supervisor",
                "requested": "billing",
                "chosen": None,
                "fell_back": True,
                "by": "supervisor",
            }
        ]


class TestStructuredOutput:
    async def test_structured_decision_is_used(self) -> None:
        llm = MockLLM(
            structured_responses=[{"next_agent": "researcher", "content": "Needs research."}]
        )
        response = await supervisor(llm, use_structured_output=True).process(make_test_state())
        assert (response.next_agent, response.content) == ("researcher", "Needs research.")

    async def test_structured_null_next_agent_finishes(self) -> None:
        llm = MockLLM(structured_responses=[{"next_agent": None, "content": "All done."}])
        response = await supervisor(llm, use_structured_output=True).process(make_test_state())
        assert (response.next_agent, response.content) == (None, "All done.")

    async def test_unusable_structured_name_falls_back_to_word_boundary_match(self) -> None:
        llm = MockLLM(structured_responses=[{"next_agent": "the greeter agent", "content": ""}])
        response = await supervisor(llm, use_structured_output=True).process(make_test_state())
        assert response.next_agent == "greeter"

    async def test_model_without_structured_output_falls_back_to_text_once(self) -> None:
        probes: list[int] = []

        class CountingLLM(MockLLM):
            def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
                probes.append(1)
                return super().with_structured_output(schema, **kwargs)

        llm = CountingLLM(responses=["greeter", "researcher"])  # no structured support
        agent = supervisor(llm, use_structured_output=True)
        first = await agent.process(make_test_state())
        second = await agent.process(make_test_state())
        assert (first.next_agent, second.next_agent) == ("greeter", "researcher")
        assert probes == [1]  # the capability is probed once and cached


async def test_runnable_config_callbacks_reach_the_model() -> None:
    started: list[list[Any]] = []

    class Spy(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            started.append(messages)

    config: RunnableConfig = {"callbacks": [Spy()], "metadata": {"langgraph_node": "supervisor"}}
    await supervisor(MockLLM(responses=["greeter"])).invoke(make_test_state("hi"), config)
    assert len(started) == 1  # tracing callbacks (LangSmith, Langfuse, OTel) see the call


class TestLLMFailures:
    async def test_model_error_becomes_llm_invocation_error(self) -> None:
        llm = MockLLM(raise_on_call=ValueError("provider said no"))
        with pytest.raises(LLMInvocationError, match="provider said no"):
            await supervisor(llm).invoke(make_test_state())

    async def test_llm_call_timeout_applies(self) -> None:
        class SlowLLM(MockLLM):
            async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
                await asyncio.sleep(5)
                return await super()._agenerate(*args, **kwargs)

        agent = supervisor(
            SlowLLM(responses=["greeter"]), timeout_config=TimeoutConfig(llm_call_seconds=0.02)
        )
        with pytest.raises(LLMInvocationError, match="TimeoutError"):
            await agent.process(make_test_state())

    async def test_transient_errors_are_retried(self) -> None:
        llm = MockLLM(responses=[TimeoutError("flaky"), "greeter"])
        retry = RetryConfig(max_attempts=2, initial_interval=0.001, jitter=False)
        response = await supervisor(llm, retry_config=retry).process(make_test_state())
        assert response.next_agent == "greeter"
        assert llm.call_count == 2

    async def test_rate_limiter_is_taken_and_released(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=1)
        agent = supervisor(MockLLM(responses=["greeter", "researcher"]), rate_limiter=limiter)
        await agent.process(make_test_state())
        await agent.process(make_test_state())  # would hang if the slot leaked
        assert limiter.in_use == 0

    async def test_refusing_rate_limiter_raises_rate_limit_exceeded(self) -> None:
        class Refusing(RateLimiter):
            async def acquire(self) -> None:
                raise RuntimeError("quota exhausted")

        llm = MockLLM(responses=["greeter"])
        with pytest.raises(RateLimitExceededError, match="quota exhausted"):
            await supervisor(llm, rate_limiter=Refusing()).invoke(make_test_state())
        assert llm.call_count == 0

    def test_llm_is_required(self) -> None:
        with pytest.raises(LLMNotConfiguredError):
            SupervisorAgent(SUPERVISOR, None, topology())  # type: ignore[arg-type]

    def test_optional_arguments_are_keyword_only(self) -> None:
        with pytest.raises(TypeError):
            SupervisorAgent(SUPERVISOR, MockLLM(), topology(), None)  # type: ignore[misc]


class TestStreaming:
    async def test_streams_tokens_then_the_final_route(self) -> None:
        llm = MockLLM(stream_chunks=[["gree", "ter"]])
        chunks = [c async for c in supervisor(llm).astream_process(make_test_state())]
        assert chunks[:2] == [
            ({"chunk_type": "token", "delta": "gree"}, "gree"),
            ({"chunk_type": "token", "delta": "ter"}, "greeter"),
        ]
        final, accumulated = chunks[-1]
        assert final == {
            "chunk_type": "final",
            "next_agent": "greeter",
            "content": "Routing to greeter.",
        }
        assert accumulated == "greeter"

    async def test_stream_failure_is_an_llm_error_and_releases_the_limiter(self) -> None:
        limiter = SemaphoreRateLimiter(max_concurrency=1)
        llm = MockLLM(raise_on_call=OSError("connection reset"))
        agent = supervisor(llm, rate_limiter=limiter)
        with pytest.raises(LLMInvocationError, match="connection reset"):
            async for _ in agent.astream_process(make_test_state()):
                pass
        assert limiter.in_use == 0

    async def test_react_mode_does_not_stream(self, tmp_path: Path) -> None:
        agent = supervisor(MockLLM(), template_manager=_template_manager(tmp_path))
        with pytest.raises(NotImplementedError, match="ReAct"):
            async for _ in agent.astream_process(make_test_state()):
                pass


REACT_CONFIG = """
max_passes: 3
actions:
  request_slot:
    description: Load a knowledge slot
    parameters: {slot: Name of the slot}
    required: [slot]
  decide:
    description: Make the routing decision
    parameters: {next_agent: Target agent, content: Reasoning}
    required: [next_agent]
slots:
  routing_rules:
    description: Routing rules
    modules: [slots/routing_rules.md]
"""


def _template_manager(tmp_path: Path) -> ReactTemplateManager:
    folder = tmp_path / "kb" / "supervisor"
    (folder / "slots").mkdir(parents=True)
    (folder / "react_config.yaml").write_text(textwrap.dedent(REACT_CONFIG))
    (folder / "react_core.md").write_text("You are {agent_name}. Targets: {allowed_agents}.")
    (folder / "slots" / "routing_rules.md").write_text("Greetings go to greeter.")
    return ReactTemplateManager("supervisor", tmp_path / "kb")


def _xml(action: str, params: str) -> str:
    return f'<thought>thinking</thought><action type="{action}">{params}</action>'


class TestReactMode:
    async def test_loads_knowledge_then_decides(self, tmp_path: Path) -> None:
        llm = MockLLM(
            responses=[
                _xml("request_slot", '{"slot": "routing_rules"}'),
                _xml("decide", '{"next_agent": "greeter", "content": "It is a greeting."}'),
            ],
            usage_tokens={"input_tokens": 5, "output_tokens": 2},
        )
        agent = supervisor(llm, template_manager=_template_manager(tmp_path))
        update = await agent.invoke(make_test_state("Hello"))
        assert update["current_agent"] == "greeter"
        assert update["messages"][0].content == "It is a greeting."
        # AD-52: the loaded knowledge lands in knowledge_context, not in the slots
        assert update["knowledge_context"] == {"routing_rules": "Greetings go to greeter."}
        assert "_loaded_slot_contents" not in update["context_slots"]
        usage = update["messages"][0].response_metadata["token_usage"]
        assert usage["input_tokens"] == 10
        assert "Targets: greeter, researcher." in str(llm.calls[0][0].content)

    async def test_a_ready_react_executor_is_used_as_is(self, tmp_path: Path) -> None:
        llm = MockLLM(responses=[_xml("decide", '{"next_agent": "researcher"}')])
        executor = ReactExecutor(
            "supervisor", llm, _template_manager(tmp_path), {"decide": decide_handler}
        )
        agent = supervisor(MockLLM(), react_executor=executor)
        response = await agent.process(make_test_state())
        assert response.next_agent == "researcher"
        assert response.content == "Routing to researcher."
        assert llm.call_count == 1

    async def test_react_decision_outside_topology_falls_back(self, tmp_path: Path) -> None:
        llm = MockLLM(responses=[_xml("decide", '{"next_agent": "billing"}')])
        agent = supervisor(llm, template_manager=_template_manager(tmp_path))
        response = await agent.process(make_test_state())
        assert response.next_agent is None

    async def test_react_self_route_raises(self, tmp_path: Path) -> None:
        llm = MockLLM(responses=[_xml("decide", '{"next_agent": "supervisor"}')])
        agent = supervisor(llm, template_manager=_template_manager(tmp_path))
        with pytest.raises(RoutingSelfLoopError):
            await agent.process(make_test_state())

    async def test_knowledge_enabled_without_template_manager_raises(self) -> None:
        config = SUPERVISOR.model_copy(update={"knowledge_enabled": True})
        agent = SupervisorAgent(config, MockLLM(responses=["greeter"]), topology())
        with pytest.raises(ReactExecutorNotConfiguredError):
            await agent.invoke(make_test_state())

    def test_repr_shows_mode_and_targets(self, tmp_path: Path) -> None:
        assert "mode=simple" in repr(supervisor(MockLLM()))
        react = supervisor(MockLLM(), template_manager=_template_manager(tmp_path))
        assert "mode=react, targets=['greeter', 'researcher']" in repr(react)


@settings(max_examples=60, deadline=None)
@given(name=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,20}", fullmatch=True))
def test_word_boundary_match_never_matches_inside_a_longer_name(name: str) -> None:
    assert find_agent_mention(f"Please hand this to {name}.", [name]) == name
    assert find_agent_mention(f"({name.upper()})", [name]) == name
    for longer in (f"{name}x", f"{name}_2", f"{name}-eu", f"x{name}"):
        assert find_agent_mention(f"send to {longer} now", [name]) is None
