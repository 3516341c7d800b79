"""BaseAgent.invoke: the state update, middleware onion, error wrapping, identity checks, events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import structlog
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from structlog.testing import capture_logs

from deskwork.graph._events import graph_emitter
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.context.slots import SlotTier
from deskwork.graph.core.exceptions import (
    AgentProcessError,
    InvalidStateError,
    OrchestratorError,
)
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.testing import make_test_state


def _config(name: str = "worker") -> AgentConfig:
    return AgentConfig(name=name, type="custom", description=f"{name} agent")


class EchoAgent(BaseAgent):
    """Echoes the last message and routes to ``route`` (None = terminate)."""

    def __init__(self, route: str | None = "supervisor", **kwargs: Any) -> None:
        super().__init__(_config(kwargs.pop("name", "worker")), **kwargs)
        self.route = route
        self.seen_states: list[OrchestratorState] = []
        self.seen_configs: list[RunnableConfig | None] = []

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        self.seen_states.append(state)
        self.seen_configs.append(config)
        return AgentResponse(
            agent_name=self.name,
            content=f"echo: {state['messages'][-1].content}",
            next_agent=self.route,
            slots_update={"count": 1},
            slots_tier={"count": SlotTier.SESSION},
            token_usage={"input_tokens": 7, "output_tokens": 3},
        )


class FailingAgent(BaseAgent):
    def __init__(self, error: Exception) -> None:
        super().__init__(_config("broken"))
        self.error = error

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        raise self.error


class Recorder(AgentMiddleware):
    """Appends ``"<label>.<hook>"`` to a shared log; optionally fails one hook."""

    def __init__(self, label: str, log: list[str], fail: str | None = None) -> None:
        self.label, self.log, self.fail = label, log, fail

    def _mark(self, hook: str) -> None:
        self.log.append(f"{self.label}.{hook}")
        if self.fail == hook:
            raise RuntimeError(f"{self.label} {hook} exploded")

    async def before_invoke(
        self, agent_name: str, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> OrchestratorState:
        self._mark("before")
        return state

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        self._mark("after")
        return response

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        self._mark("on_error")


def _collect() -> tuple[list[tuple[str, str, dict[str, Any]]], Any]:
    events: list[tuple[str, str, dict[str, Any]]] = []
    return events, lambda t, s, p: events.append((t, s, p))


class TestStateUpdate:
    async def test_update_carries_message_route_slots_and_metadata(self) -> None:
        agent = EchoAgent(route="supervisor")
        state = make_test_state("hi", request_id="req-1")
        config: RunnableConfig = {"metadata": {"langgraph_step": 3, "langgraph_node": "worker"}}
        update = await agent.invoke(state, config)
        assert update["current_agent"] == "supervisor"
        assert update["context_slots"] == {"count": 1}
        [message] = update["messages"]
        assert isinstance(message, AIMessage)
        assert (message.content, message.name) == ("echo: hi", "worker")
        meta = message.response_metadata
        assert meta["request_id"] == "req-1"
        assert (meta["session_id"], meta["user_id"]) == ("test-session", "test-user")
        assert (meta["langgraph_step"], meta["langgraph_node"]) == (3, "worker")
        assert meta["token_usage"] == {"input_tokens": 7, "output_tokens": 3}
        assert meta["slots_tier"] == {"count": "session"}
        # the RunnableConfig reaches process() unchanged
        assert agent.seen_configs == [config]

    async def test_terminating_agent_sets_current_agent_to_its_own_name(self) -> None:
        update = await EchoAgent(route=None).invoke(make_test_state("bye"))
        assert update["current_agent"] == "worker"

    async def test_loaded_slot_contents_move_into_knowledge_context(self) -> None:
        class KnowledgeAgent(BaseAgent):
            async def process(
                self, state: OrchestratorState, config: RunnableConfig | None = None
            ) -> AgentResponse:
                return AgentResponse(
                    agent_name=self.name,
                    content="done",
                    slots_update={
                        "answer": 42,
                        "_loaded_slot_contents": {"routing_rules": "# Rules"},
                    },
                )

        update = await KnowledgeAgent(_config("kb")).invoke(make_test_state())
        assert update["context_slots"] == {"answer": 42}
        assert update["knowledge_context"] == {"routing_rules": "# Rules"}

    async def test_no_knowledge_context_key_without_loaded_slots(self) -> None:
        update = await EchoAgent().invoke(make_test_state())
        assert "knowledge_context" not in update

    async def test_binds_logging_context_for_the_request(self) -> None:
        structlog.contextvars.clear_contextvars()
        await EchoAgent(redact_pii=True).invoke(make_test_state(request_id="req-9"))
        bound = structlog.contextvars.get_contextvars()
        assert bound["request_id"] == "req-9"
        assert bound["user_id"] not in ("test-user", None)  # hashed, never the raw id
        assert len(bound["user_id"]) == 12
        structlog.contextvars.clear_contextvars()


class TestErrors:
    async def test_plain_exception_becomes_agent_process_error(self) -> None:
        boom = ValueError("bad input")
        with pytest.raises(AgentProcessError) as info:
            await FailingAgent(boom).invoke(make_test_state())
        assert info.value.agent_name == "broken"
        assert info.value.cause is boom
        assert info.value.__cause__ is boom
        assert "ValueError: bad input" in str(info.value)

    async def test_orchestrator_errors_pass_through_unchanged(self) -> None:
        original = InvalidStateError("messages missing")
        with pytest.raises(InvalidStateError) as info:
            await FailingAgent(original).invoke(make_test_state())
        assert info.value is original

    async def test_astream_process_is_not_supported_by_default(self) -> None:
        with pytest.raises(NotImplementedError, match="EchoAgent"):
            async for _ in EchoAgent().astream_process(make_test_state()):
                pass

    async def test_identity_mutation_logs_a_warning(self) -> None:
        class Hijacker(BaseAgent):
            async def process(
                self, state: OrchestratorState, config: RunnableConfig | None = None
            ) -> AgentResponse:
                state["user_id"] = "someone-else"
                return AgentResponse(agent_name=self.name, content="ok")

        with capture_logs() as logs:
            await Hijacker(_config("hijacker")).invoke(make_test_state())
        [warning] = [e for e in logs if e["event"] == "identity_field_mutated"]
        assert warning["log_level"] == "warning"
        assert warning["agent_name"] == "hijacker"
        assert warning["fields"] == ["user_id"]


class TestMiddlewareOnion:
    async def test_order_before_first_to_last_after_last_to_first(self) -> None:
        log: list[str] = []
        mws = [Recorder(n, log) for n in ("a", "b", "c")]
        await EchoAgent(middleware=mws).invoke(make_test_state())
        assert log == ["a.before", "b.before", "c.before", "c.after", "b.after", "a.after"]

    async def test_on_error_runs_last_to_first_when_process_fails(self) -> None:
        log: list[str] = []

        class Broken(FailingAgent):
            pass

        agent = Broken(RuntimeError("x"))
        agent.middleware = tuple(Recorder(n, log) for n in ("a", "b"))
        with pytest.raises(AgentProcessError):
            await agent.invoke(make_test_state())
        assert log == ["a.before", "b.before", "b.on_error", "a.on_error"]

    async def test_middleware_can_rewrite_state_and_response(self) -> None:
        class Rewriter(AgentMiddleware):
            async def before_invoke(
                self, agent_name: str, state: OrchestratorState, config: Any = None
            ) -> OrchestratorState:
                new = state.copy()
                new["context_slots"] = {"injected": True}
                return new

            async def after_invoke(
                self, agent_name: str, state: OrchestratorState, response: Any, config: Any = None
            ) -> AgentResponse:
                return AgentResponse(agent_name=agent_name, content="rewritten", next_agent=None)

        agent = EchoAgent(middleware=[Rewriter()])
        update = await agent.invoke(make_test_state())
        assert agent.seen_states[0]["context_slots"] == {"injected": True}
        assert update["messages"][0].content == "rewritten"
        assert update["current_agent"] == "worker"

    async def test_raising_before_hook_stops_the_call_and_unwinds_entered_layers(self) -> None:
        log: list[str] = []
        agent = EchoAgent(
            middleware=[Recorder("a", log), Recorder("b", log, fail="before"), Recorder("c", log)]
        )
        events, emit = _collect()
        with graph_emitter(emit), pytest.raises(AgentProcessError, match="b before exploded"):
            await agent.invoke(make_test_state())
        assert agent.seen_states == []  # process() never ran
        assert log == ["a.before", "b.before", "a.on_error"]
        failed = [p for t, _, p in events if t == "graph.middleware.failed"]
        assert failed == [
            {
                "agent_name": "worker",
                "middleware": "Recorder",
                "hook": "before_invoke",
                "error_type": "RuntimeError",
                "error": "b before exploded",
            }
        ]

    async def test_raising_after_hook_fails_the_call_and_outer_layers_get_on_error(self) -> None:
        log: list[str] = []
        agent = EchoAgent(middleware=[Recorder("a", log), Recorder("b", log, fail="after")])
        with pytest.raises(AgentProcessError, match="b after exploded"):
            await agent.invoke(make_test_state())
        assert log == ["a.before", "b.before", "b.after", "a.on_error"]

    async def test_failing_on_error_never_masks_the_original_error(self) -> None:
        log: list[str] = []
        agent = FailingAgent(InvalidStateError("the real problem"))
        agent.middleware = (Recorder("a", log), Recorder("b", log, fail="on_error"))
        events, emit = _collect()
        with graph_emitter(emit), pytest.raises(InvalidStateError, match="the real problem"):
            await agent.invoke(make_test_state())
        assert log == ["a.before", "b.before", "b.on_error", "a.on_error"]
        assert [p["hook"] for t, _, p in events if t == "graph.middleware.failed"] == ["on_error"]


class TestEvents:
    async def test_started_and_completed_events_with_usage_and_route(self) -> None:
        events, emit = _collect()
        with graph_emitter(emit):
            await EchoAgent(route="supervisor").invoke(make_test_state("x" * 500))
        assert [(t, s) for t, s, _ in events] == [
            ("graph.agent.started", "worker"),
            ("graph.agent.completed", "worker"),
        ]
        done = events[1][2]
        assert done["next_agent"] == "supervisor"
        assert done["token_usage"] == {"input_tokens": 7, "output_tokens": 3}
        assert done["slot_keys_updated"] == ["count"]
        assert len(done["content_preview"]) <= 80  # a preview, not the whole message
        assert done["duration_ms"] >= 0

    async def test_failed_event_names_the_error(self) -> None:
        events, emit = _collect()
        with graph_emitter(emit), pytest.raises(AgentProcessError):
            await FailingAgent(KeyError("slot")).invoke(make_test_state())
        assert [t for t, _, _ in events] == ["graph.agent.started", "graph.agent.failed"]
        failed = events[1][2]
        assert (failed["agent_name"], failed["error_type"]) == ("broken", "KeyError")
        assert "slot" in failed["error"]

    async def test_secrets_in_errors_stay_out_of_logs_and_events(self) -> None:
        events, emit = _collect()
        error = RuntimeError("upstream rejected api_key=sk-live-0123456789abcdef")
        with graph_emitter(emit), capture_logs() as logs, pytest.raises(AgentProcessError):
            await FailingAgent(error).invoke(make_test_state())
        assert "sk-live-0123456789abcdef" not in repr(logs)
        assert "sk-live-0123456789abcdef" not in repr(events)

    async def test_no_events_outside_a_desk_run(self) -> None:
        # without graph_emitter, emitting is a silent no-op
        update = await EchoAgent().invoke(make_test_state())
        assert update["current_agent"] == "supervisor"


async def test_concurrent_invocations_do_not_share_state() -> None:
    agent = EchoAgent(middleware=[Recorder("a", [])])
    states = [make_test_state(f"m{i}", request_id=f"r{i}") for i in range(5)]
    updates = await asyncio.gather(*(agent.invoke(s) for s in states))
    assert [u["messages"][0].content for u in updates] == [f"echo: m{i}" for i in range(5)]
    assert [u["messages"][0].response_metadata["request_id"] for u in updates] == [
        f"r{i}" for i in range(5)
    ]


def test_repr_and_properties() -> None:
    agent = EchoAgent(middleware=[Recorder("a", [])])
    assert repr(agent) == "EchoAgent(name='worker', middleware=['Recorder'])"
    assert agent.name == "worker"
    assert agent.description == "worker agent"
    assert isinstance(AgentProcessError("x"), OrchestratorError)
